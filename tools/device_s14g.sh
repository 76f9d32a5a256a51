#!/usr/bin/env bash
# Session 14, run G (device tool, carry .whl): what the rows' replay overlap guard costs a small
# call: tools/host_rows.py on the session's starting tree (e10fbec, copied to tools/ab_s14, not
# committed) and on this tree, alternated three times on one host.
. tools/device-preamble.sh  # environment, log, GPU
for round in 1 2 3; do
    for tree in old new; do
        if [ $tree = old ]; then pp=/tmp/site:$PWD/tools/ab_s14; else pp=/tmp/site:$PWD; fi
        echo "round $round $tree: $(PYTHONPATH=$pp timeout 120 python3 tools/host_rows.py 2>&1 | grep -E 'empty|1x4096' | tr '\n' ' ')"
    done
done
