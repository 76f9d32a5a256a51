#!/usr/bin/env bash
# Session 30, run E (device tool, carry .whl; an H100, perf-notes r27): the whole row GPU file
# on the H100 side of this session's rules (the 64-element rms_norm build is not chosen at
# <= 30 GB/s of DRAM an SM; the rewritten layout test's H100 branch), then both rms_norm
# builds in a block per row against the automatic plan there (tools/rows_wide_probe.py,
# two processes).
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 250 python3 tools/rows_wide_probe.py --reps 1 > "$out/warm_probe.txt" 2>&1 &
pid=$!
gpu_tests 420 380 t_rows.txt -n 14 tests/test_rows_gpu.py
wait $pid
for round in 1 2; do
    timeout 100 python3 tools/rows_wide_probe.py --json "$out/probe$round.json" 2>&1 | grep -v Warning
done
echo "done at ${SECONDS}s"
