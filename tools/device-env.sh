# Source on a lent GPU machine (see docs/validation.md): carried wheels first on PYTHONPATH
# (the machine's numpy 2.5 breaks numba-cuda 0.30.4), kernel cache inside the checkout.
# The wheels are installed again whenever the set carried in .whl/ differs from the one
# installed (a warm machine keeps /tmp/site between calls, and asv's wheels came later).
wheels=$(ls .whl | sort | sha1sum)
if [ "$(cat /tmp/site/.wheels 2>/dev/null)" != "$wheels" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || return 1
    echo "$wheels" > /tmp/site/.wheels
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NBKERNELS_CACHE_DIR=$PWD/.nbk_cache
