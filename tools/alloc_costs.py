"""What an output's allocation costs a small call, by the way it is made (device machine;
perf-notes h10). Times, per call of a tight loop (median of 5 loops of 2000 after warm-up,
as tools/host_parts.py), the ways CuPy and torch can make a 1 x 4096 output like the input
of a small row call, beside the replays' own allocation (``repeat.framework_ops``), in two
rounds. ``python tools/alloc_costs.py``"""
import cupy
import numpy as np

from nbkernels import repeat
from nbkernels.arrays import BF16

from host_parts import per_call  # tools/ (the script's own directory)


def main():
    x = cupy.zeros((1, 4096), BF16)
    repeat.kind_of(x)
    dev = x.data.device_id
    alloc = repeat.framework_ops(repeat.CUPY, dev)[0]
    shape, bf16, f16 = (1, 4096), np.dtype(BF16), np.dtype(np.float16)
    parts = [
        ("replay allocation (CuPy, framework_ops)", lambda: alloc(x, shape, bf16)),
        ("cupy.ndarray(shape, bf16)", lambda: cupy.ndarray(shape, bf16)),
        ("cupy.ndarray(shape, f16)", lambda: cupy.ndarray(shape, f16)),
        ("cupy.ndarray(shape, float32)", lambda: cupy.ndarray(shape, np.float32)),
        ("cupy.ndarray(shape, bf16, memptr=alloc(8192))",
         lambda: cupy.ndarray(shape, bf16, memptr=cupy.cuda.memory.alloc(8192))),
        ("cupy.cuda.memory.alloc(8192)", lambda: cupy.cuda.memory.alloc(8192)),
        ("cupy.empty_like(x)", lambda: cupy.empty_like(x)),
    ]
    try:
        import torch

        t = torch.zeros((1, 4096), dtype=torch.bfloat16, device="cuda")
        repeat.kind_of(t)
        talloc = repeat.framework_ops(repeat.TORCH, t.get_device())[0]
        cf = torch.contiguous_format
        parts += [
            ("replay allocation (torch, framework_ops)", lambda: talloc(t, shape, bf16)),
            ("t.new_empty(shape, dtype=bfloat16)",
             lambda: t.new_empty(shape, dtype=torch.bfloat16)),
            ("t.new_empty(shape)", lambda: t.new_empty(shape)),
            ("torch.empty_like(t)", lambda: torch.empty_like(t)),
            ("torch.empty_like(t, memory_format=contiguous)",
             lambda: torch.empty_like(t, memory_format=cf)),
            ("torch.empty(shape, dtype, device)",
             lambda: torch.empty(shape, dtype=torch.bfloat16, device=t.device)),
            ("repeat.torch_dtype_of(bf16)", lambda: repeat.torch_dtype_of(bf16)),
        ]
    except ImportError:
        pass
    width = max(len(p[0]) for p in parts)
    for r in (1, 2):
        print(f"--- round {r}")
        for name, fn in parts:
            print(f"{name:<{width}}  {per_call(fn):6.2f} us", flush=True)


if __name__ == "__main__":
    main()
