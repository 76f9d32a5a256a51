#!/usr/bin/env bash
# Session 45, run G (device tool, carry .whl and _ab; _ab/old = `git archive f9e5b60`;
# measurement only): the small calls again, the session's start and this tree alternated
# three times on one host (runs B-D had two clean rounds between them).
. tools/device-preamble.sh
old=$(cd _ab/old && pwd)
for round in 1 2 3; do
    for dir in "$old" "$PWD"; do
        [ "$SECONDS" -gt 200 ] && break 2
        if [ "$dir" = "$old" ]; then echo "--- old, round $round"; else echo "--- new, round $round"; fi
        (cd "$dir" && PYTHONPATH=/tmp/site:$dir NBKERNELS_CACHE_DIR=$dir/.nbk_cache \
            timeout 90 python3 tools/host_parts.py --calls 2>&1 | grep -E "empty|rms_norm|matmul")
    done
done
echo "done at ${SECONDS}s"
