#!/usr/bin/env bash
# Session 25, run D (device tool, carry .whl; H100): the per-row rule (perf-notes r18) as
# committed: the bandwidth per SM the host reads, the row benchmark with every op,
# then tools/sanitize_rows.py under compute-sanitizer memcheck and racecheck. The same steps
# as run G's script without its mode comparison and tests.
MODES=auto TESTS=0 exec bash tools/device_s25g.sh
