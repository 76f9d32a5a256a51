# Sourced by the row device scripts after tools/device-preamble.sh: warm_rows fills the disk
# cache before anything is timed, one process per op and dtype (each compiles its kernel once).
#   warm_rows "OPS" "DTYPES" [resid] [sanitize]
# resid: rms_norm with a residual too (its own build); sanitize: also each op's cases of
# tools/sanitize_rows.py (their results print last).
warm_rows() {
    local ops=$1 dtypes=$2 pids="" d op
    shift 2
    for d in $dtypes; do
        for op in $ops; do
            timeout 200 python3 tools/rows_ab_quick.py --ops $op --dtypes $d --reps 1 \
                > "$out/warm_${op}_$d.txt" 2>&1 &
            pids="$pids $!"
        done
        if [[ " $* " == *" resid "* ]]; then
            timeout 200 python3 -c "
import cupy, nbkernels
from nbkernels.rows import bench
x = cupy.ones((64, 4096), bench.dtype_named('$d'))
nbkernels.rms_norm(x, x[0], residual=x.copy()); cupy.cuda.runtime.deviceSynchronize()" \
                > "$out/warm_resid_$d.txt" 2>&1 &
            pids="$pids $!"
        fi
    done
    if [[ " $* " == *" sanitize "* ]]; then
        for op in rms_norm_residual layer_norm softmax swiglu_packed rms_norm; do
            timeout 300 python3 tools/sanitize_rows.py $op > "$out/san_$op.txt" 2>&1 &
            pids="$pids $!"
        done
    fi
    wait $pids
    if [[ " $* " == *" sanitize "* ]]; then tail -q -n 1 "$out"/san_*.txt; fi
    echo "warm-up done at ${SECONDS}s"
}

# sanitize_rows: tools/sanitize_rows.py under compute-sanitizer memcheck, then racecheck
# (SAN_S seconds each, default 100), after warm_rows ... sanitize compiled its kernels.
sanitize_rows() {
    local tool
    for tool in memcheck racecheck; do
        timeout ${SAN_S:-100} compute-sanitizer --tool $tool --report-api-errors no \
            python3 tools/sanitize_rows.py 2>&1 | tail -3
        echo "$tool done at ${SECONDS}s"
    done
}

# warm_rows_bench: every row op's kernels for the row benchmark (bf16 and f32, the
# residual build too) and rms_norm and layer_norm in f16, before the whole row GPU file and
# `rows.bench` run (sessions 31-32).
warm_rows_bench() {
    warm_rows "rms_norm layer_norm softmax swiglu" "bf16 f32" resid
    timeout 200 python3 tools/rows_ab_quick.py --ops rms_norm,layer_norm --dtypes f16 --reps 1 \
        > /dev/null 2>&1
    echo "warm-up done at ${SECONDS}s"
}
