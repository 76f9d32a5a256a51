#!/usr/bin/env bash
# Session 8, run 4: the repeat path on torch tensors (stream from torch's raw-stream query,
# outputs from new_empty): the row replays on CuPy and torch, the stream-ordering tests
# (replays queued behind a sleep and an update on a side stream), the GEMM torch and repeat
# tests, in parallel processes; then a negative control: the same ordering check with the
# replay's stream forced to the legacy default stream must see stale data.
. tools/device-preamble.sh  # environment, log, GPU
PYT="python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
pids=""
for op in rms_norm layer_norm softmax swiglu; do
    timeout 400 $PYT tests/test_rows_gpu.py -k "repeat and $op" > "$out/t_rep_$op.txt" 2>&1 &
    pids="$pids $!"
done
timeout 400 $PYT tests/test_rows_gpu.py -k "replays_run or in_place" > "$out/t_rows_stream.txt" 2>&1 &
pids="$pids $!"
timeout 400 $PYT tests/test_gemm_gpu.py -k "torch or repeat" > "$out/t_gemm.txt" 2>&1 &
pids="$pids $!"
timeout 400 $PYT tests/test_gemm_f64_gpu.py -k "repeat" > "$out/t_f64.txt" 2>&1 &
pids="$pids $!"
timeout 400 $PYT tests/test_gemm_sm90a_gpu.py -k "repeat" > "$out/t_sm90a.txt" 2>&1 &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
echo "tests done at ${SECONDS}s"
timeout 120 python3 - <<'PY'
import torch, nbkernels
from unittest import mock
from nbkernels import repeat
x = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
for _ in range(2):
    nbkernels.rms_norm(x, w)
torch.cuda.synchronize()
s = torch.cuda.Stream()
new = torch.randn_like(x)
with mock.patch.object(repeat, "stream_handle", lambda like, stream=None: 0):
    with torch.cuda.stream(s):
        torch.cuda._sleep(20_000_000)
        x.copy_(new)
        y = nbkernels.rms_norm(x, w)
s.synchronize()
ref = nbkernels.rms_norm(new, w)
torch.cuda.synchronize()
stale = not torch.equal(y, ref)
print(f"negative control (replay forced onto stream 0): {'stale, as expected' if stale else 'NOT stale: the ordering test cannot tell'}")
PY
echo "done at ${SECONDS}s"
