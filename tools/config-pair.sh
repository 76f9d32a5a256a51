# Sourced by device scripts after tools/device-preamble.sh (session 43): one sm90a
# configuration beside the default tile and cuBLAS, in one tree, built first in parallel.
#   config_pair CFG SHAPES LABEL [LIMIT_S]   prewarm the default and CFG (bf16, f16), then two
#       bench_hopper processes (no Triton, no sm80) writing $out/LABEL1.json and LABEL2.json,
#       and tools/bench_pair.py's summary of both
config_pair() {
    local cfg=$1 shapes=$2 label=$3 limit=${4:-150} p
    timeout 150 python3 tools/prewarm_sm90a.py --kinds bf16,f16 default "$cfg"
    for p in 1 2; do
        echo "--- process $p at ${SECONDS}s"
        timeout "$limit" python3 -m nbkernels.matmul.bench_hopper --no-triton --no-sm80 \
            --shapes "$shapes" --configs "$cfg" --json "$out/$label$p.json" 2>&1 \
            | grep -v Warning | tail -n 8
    done
    python3 tools/bench_pair.py "$cfg" "$out/${label}1.json" "$out/${label}2.json"
}
