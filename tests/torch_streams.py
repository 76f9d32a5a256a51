"""Stream-order checks (GPU tests of gemm and the row kernels): torch side-stream replays,
and helpers that delay a CuPy stream and clobber the current stream's pool."""


def replays_on_side_stream(fn, x, out):
    """Yield ``(result, new, with_out)`` for three repeat calls ``fn(out_or_None)`` that each
    read ``x``, queued on a torch side stream behind a ~10 ms sleep and an update of ``x`` to
    ``new`` (fresh random values). A call launched on any other stream would run before the
    update lands and read the old ``x``. ``out`` is NaN-poisoned before each call."""
    import torch

    s = torch.cuda.Stream()
    for with_out in (False, True, False):
        new = torch.randn_like(x)
        torch.cuda.synchronize()
        out.fill_(float("nan"))
        with torch.cuda.stream(s):
            torch.cuda._sleep(20_000_000)  # ~10 ms: the update lands well after the launch
            x.copy_(new)
            result = fn(out if with_out else None)
        s.synchronize()
        assert (result is out) == with_out
        yield result, new, with_out


def cupy_sleep(stream, ms):
    """Queue a one-thread kernel that spins for about ``ms`` milliseconds on a CuPy stream: work
    queued behind it on that stream runs that much later than work on other streams."""
    import cupy
    import numpy as np

    k = cupy.RawKernel(r'''extern "C" __global__ void nbk_sleep(long long cycles) {
        long long t0 = clock64(); while (clock64() - t0 < cycles) {} }''', "nbk_sleep")
    khz = cupy.cuda.Device().attributes["ClockRate"]
    with stream:
        k((1,), (1,), (np.int64(khz * ms),))


def clobber_current_pool():
    """Allocate and fill (NaN) blocks of many sizes on the current CuPy stream: memory freed to
    this stream's pool while a kernel on another stream still reads it gets overwritten."""
    import cupy
    import numpy as np

    return [cupy.full(1 << e, np.nan, np.float32) for e in range(8, 23) for _ in range(3)]
