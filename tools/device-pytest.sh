# Sourced by device scripts after tools/device-preamble.sh (session 28): one pytest run of GPU
# tests with a limit, a faulthandler dump before it, and its output under $out.
#   gpu_tests LIMIT_S FAULT_S FILE PYTEST-ARGS...   prints the summary line and failures
gpu_tests() {
    local limit=$1 fault=$2 file=$3
    shift 3
    timeout -s ABRT "$limit" python3 -X faulthandler -m pytest -q -p no:cacheprovider \
        -o faulthandler_timeout="$fault" "$@" > "$out/$file" 2>&1
    echo "pytest rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' "$out/$file" | tail -n 1)"
    grep -E "^(FAILED|ERROR)|Timeout|Fatal" "$out/$file" | head -12
}
