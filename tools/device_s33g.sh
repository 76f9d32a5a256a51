#!/usr/bin/env bash
# Session 33, run G: the asv suite's new call-overhead case, a new `a` each call (gemm.py's
# CallOverhead mode out_new_a), measured directly (its setup_cache function, without asv),
# beside CallOverhead's out= case on the same arrays each call, on a Hopper GPU (the sm90a variant forced: each call encodes a new tensor map).
. tools/device-preamble.sh
cd benchmarks_asv && timeout 170 python3 -c "
import sys; sys.path.insert(0, '.')
from benchmarks import gemm
same = gemm._measure_call('out'); new = gemm._measure_call(gemm.NEW_A)
print(f'same operands: {same[\"seconds\"] * 1e6:.1f} us/call ({same[\"vs_cupy\"]:.2f}x cupy.matmul)')
print(f'new a each call: {new[\"seconds\"] * 1e6:.1f} us/call ({new[\"vs_cupy\"]:.2f}x cupy.matmul)')
"
