#!/usr/bin/env bash
# Planned runs of the session after 39 (H200; carry .whl): the sm90a GPU file on session 39's
# final code. Session 39 ran it on the committed uniform descriptor (run C passed the 200-case
# sweep; B, the file's front, 298 cases; D, parts of the rest), but the ping-pong turn (perf-notes
# s24) came after those runs and changes the ping-pong tiles of every part. -v names what passed
# (passed_PART.txt under $OUT: copy it to .device_lists/ for a later call's NBK_SKIP_LISTED);
# tools/sanitize_streamk.py runs under compute-sanitizer where time is left.
# Usage: BUDGET=S bash tools/device_s40b.sh 1|2|3 (tools/sm90a-parts.sh: 1 the deferred
# sweep, split tail, persistent tiles, dispatch, fused epilogue; 2 the 200-case sweep; 3 the
# guarded and offloaded sweeps, clusters, repeat calls, the map cache, torch).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/sm90a-parts.sh
sm90a_part "$1"
timeout 330 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs $cfgs 2>&1 | tail -n 1
left=$((${BUDGET:-580} - 90 - SECONDS))
skip=()
[ -n "$NBK_SKIP_LISTED" ] && skip=(-p tools.pytest_skip_listed)
gpu_tests $left 250 t$1.txt -n 16 "${skip[@]}" tests/test_gemm_sm90a_gpu.py -k "$sel"
grep -oE "PASSED tests/[^ ]+" "$out/t$1.txt" | cut -d' ' -f2 > "$out/passed_$1.txt"
for tool in memcheck racecheck; do
    [ $((${BUDGET:-580} - SECONDS)) -lt 40 ] && { echo "$tool: no time left"; continue; }
    timeout $((${BUDGET:-580} - SECONDS - 5)) compute-sanitizer --tool $tool --report-api-errors no \
        --print-limit 20 python3 tools/sanitize_streamk.py 2>&1 | grep -v Warning | tail -n 3
    echo "streamk $tool rc=$? at ${SECONDS}s"
done
