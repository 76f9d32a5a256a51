"""Stream-order checks for repeat calls on torch tensors (GPU tests of gemm and the row kernels)."""


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
