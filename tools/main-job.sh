# Sourced by device scripts after tools/device-preamble.sh: the README's main job on an empty
# kernel cache, then again with the cache it filled, with the toolchain doctor and the
# intrinsic probes (sessions 37 and 43).
#   main_job   doctor, demo twice, demo --probes (their last lines)
main_job() {
    export NBKERNELS_CACHE_DIR=/tmp/nbk-demo-cache
    rm -rf "$NBKERNELS_CACHE_DIR"
    timeout 60 python3 -m nbkernels doctor 2>&1 | tail -n 25
    local i
    for i in 1 2; do
        echo "--- demo, process $i at ${SECONDS}s"
        timeout 150 python3 -m nbkernels demo 2>&1 | tail -n 12
    done
    echo "--- demo --probes at ${SECONDS}s"
    timeout 150 python3 -m nbkernels demo --probes 2>&1 | tail -n 8
}
