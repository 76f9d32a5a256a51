#!/usr/bin/env bash
# Session 37, asv on the lent machine (carry .whl with numpy 2.4 and asv's wheels, and
# benchmarks_asv/bundle from `benchmarks_asv/run.sh --bundle`): the asv suite on the commits
# named (default main's head), results.tgz under $OUT after each commit.
. tools/device-preamble.sh
python3 -c "import asv, cupy, torch; print('asv', asv.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__)"
NBK_ASV_WORK=/tmp/nbk-asv benchmarks_asv/run.sh --budget "${BUDGET:-540}" --out "$out" "$@"
