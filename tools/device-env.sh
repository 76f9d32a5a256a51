# Source on a lent GPU machine (see docs/validation.md): carried wheels first on PYTHONPATH
# (the machine's numpy 2.5 breaks numba-cuda 0.30.4), kernel cache inside the checkout.
if [ ! -d /tmp/site/numpy ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || return 1
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NBKERNELS_CACHE_DIR=$PWD/.nbk_cache
