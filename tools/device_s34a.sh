#!/usr/bin/env bash
# Session 34, run A (kind nvidia-h100-x2; carry .whl and _ab, _ab/old = 11907d7): calls on
# arrays of GPU 1 while GPU 0 is current. tools/multi_gpu_probe.py on the old tree and on this
# one, one scenario a process, all at once; then tests/test_multi_gpu.py; then the host
# pieces of a small call on this tree (the replays' new device check among them).
. tools/device-preamble.sh
. tools/device-pytest.sh
nvidia-smi -L
old=$(cd _ab/old && pwd)
pids=""
for s in cupy_gemm torch_gemm cupy_softmax stream_of_gpu0; do
    (cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 200 \
        python3 "$OLDPWD/tools/multi_gpu_probe.py" $s > "$out/old_$s.txt" 2>&1) &
    pids="$pids $!"
    timeout 200 python3 tools/multi_gpu_probe.py $s > "$out/new_$s.txt" 2>&1 &
    pids="$pids $!"
done
wait $pids
for f in "$out"/old_*.txt "$out"/new_*.txt; do echo "$(basename $f .txt): $(tail -n 1 $f)"; done
echo "--- probes done at ${SECONDS}s"
gpu_tests 300 240 multi.txt -n 6 tests/test_multi_gpu.py tests/test_devices.py
timeout 120 python3 tools/host_parts.py 2>&1 | grep -v "^ *$" | head -60
