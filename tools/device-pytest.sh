# Sourced by device scripts after tools/device-preamble.sh (session 28): one pytest run of GPU
# tests with a limit, a faulthandler dump before it, and its output (-v) under $out.
#   gpu_tests LIMIT_S FAULT_S FILE PYTEST-ARGS...   prints the summary line and failures
#   sanitizers LIMIT_S "SCRIPT ARGS"...   compute-sanitizer memcheck, then racecheck, on each
#                      script (LIMIT_S each; the last lines of each report)
#   row_sanitizer OP   the same on the OP cases of tools/sanitize_rows.py (200 s each)
gpu_tests() {
    local limit=$1 fault=$2 file=$3
    shift 3
    timeout -s ABRT "$limit" python3 -X faulthandler -m pytest -v -p no:cacheprovider \
        -o faulthandler_timeout="$fault" "$@" > "$out/$file" 2>&1
    # -v names each case as it ends, so a run stopped by its limit still says what passed (a
    # later call can deselect those: NBK_SKIP_LISTED with -p tools.pytest_skip_listed)
    echo "pytest rc=$? at ${SECONDS}s: $(grep -cE ' PASSED( |$)' "$out/$file") PASSED," \
         "$(grep -cE ' (FAILED|ERROR)( |$)' "$out/$file") FAILED/ERROR lines;" \
         "$(grep -E '[0-9]+ (passed|failed)' "$out/$file" | tail -n 1)"
    grep -E "^(FAILED|ERROR)| (FAILED|ERROR) |Timeout|Fatal" "$out/$file" | head -12
}

sanitizers() {
    local limit=$1 s tool
    shift
    for s in "$@"; do
        echo "--- $s"
        for tool in memcheck racecheck ${SANITIZER_EXTRA:-}; do
            # shellcheck disable=SC2086
            timeout "$limit" compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
                python3 $s 2>&1 | grep -v Warning | tail -n 3
            echo "$tool rc=$? at ${SECONDS}s"
        done
    done
}

row_sanitizer() { sanitizers 200 "tools/sanitize_rows.py $1"; }
# SANITIZER_EXTRA="synccheck" (session 44): more compute-sanitizer tools after those two
# the row GPU tests of misaligned, padded and strided rows, streams, overlap and in-place calls
# (pytest -k; session 50, the padded rows' copies)
PADDED_ROW_TESTS="misaligned or transposed or 122 or stream or overlap or read_only or in_place or 8191 or 4097 or 5001 or rowstride"
