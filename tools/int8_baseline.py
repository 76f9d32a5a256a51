"""torch._int_mm (cuBLASLt int8) with b row-major against b column-major, at 4096^3 and
8192^3: which layout the asv suite's int8 baseline should give cuBLAS (session 37)."""
import torch


def tops(fn, a, b, n=2 * 4096 ** 3, reps=20):
    for _ in range(3):
        fn(a, b)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):
        start.record()
        for _ in range(reps):
            fn(a, b)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / reps)
    return n / sorted(times)[2] / 1e12


for s in (4096, 8192):
    g = torch.Generator(device="cuda").manual_seed(s)
    a = torch.randint(-64, 64, (s, s), dtype=torch.int8, device="cuda", generator=g)
    b = torch.randint(-64, 64, (s, s), dtype=torch.int8, device="cuda", generator=g)
    bt = b.t().contiguous().t()
    assert torch.equal(torch._int_mm(a, b), torch._int_mm(a, bt))
    print(f"int8 {s}^3: torch._int_mm b row-major {tops(torch._int_mm, a, b, 2 * s ** 3):.0f} "
          f"TOPS, b column-major {tops(torch._int_mm, a, bt, 2 * s ** 3):.0f} TOPS")
