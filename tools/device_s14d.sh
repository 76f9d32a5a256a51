#!/usr/bin/env bash
# Session 14, run D (device tool, carry .whl): the GEMM's out-aliasing GPU test, now on shapes
# of several waves of tiles, with the fix (expected to pass) and on a copy of the package
# without it (expected to fail: run C's one-wave shapes passed there, so that test could not
# fail on this GPU).
. tools/device-preamble.sh  # environment, log, GPU
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=250"
timeout -s ABRT 250 $T -n 5 tests/test_gemm_gpu.py -k "sharing" > /tmp/t6.txt 2>&1
echo "WITH the fix, rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t6.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)" /tmp/t6.txt | head
rm -rf /tmp/nofix && mkdir -p /tmp/nofix && cp -r nbkernels tests setup.cfg /tmp/nofix/
cd /tmp/nofix
sed -i 's/shared = \[op for op, v in (("a", va), ("b", vb)) if arrays.may_overlap(vo, v)\]/shared = []/' nbkernels/matmul/api.py
sed -i 's/^    def aliased(self, ptrs) -> bool:/    def aliased(self, ptrs) -> bool:\n        return False/' nbkernels/matmul/fast.py
git diff --no-index --stat $OLDPWD/nbkernels nbkernels | tail -n 3
PYTHONPATH=/tmp/site:/tmp/nofix timeout -s ABRT 250 $T -n 5 tests/test_gemm_gpu.py -k "sharing" > /tmp/t7.txt 2>&1
echo "WITHOUT the fix, rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t7.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)" /tmp/t7.txt | head
grep -E "^E +AssertionError" /tmp/t7.txt | cut -c1-200 | head -6
cp /tmp/t6.txt /tmp/t7.txt "${OUT:-/tmp}/"
echo "done at ${SECONDS}s"
