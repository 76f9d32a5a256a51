#!/usr/bin/env bash
# Session 43, run G (H200; carry .whl): compute-sanitizer memcheck and racecheck on
# tools/sanitize_defer.py (its 128x256x4ke2 case: the split tail with deferred stores, on the
# session's hand-off) and on tools/sanitize_streamk.py again, the builds made first in parallel.
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 150 python3 tools/prewarm_sm90a.py --kinds bf16,f16 default 64x128x4e2 128x256x4ke2 \
    128x256x3d2e4 128x256x4k
sanitizers 120 "tools/sanitize_defer.py" "tools/sanitize_streamk.py"
echo "done at ${SECONDS}s"
