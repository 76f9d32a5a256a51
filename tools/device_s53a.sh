# Session 53, run A (perf-notes r65): layer_norm's lanes moments in two passes of sums (this
# checkout) against Chan's meet steps (_ab/old: HEAD before it) and the two passes at 48
# registers (_ab/b48: 16-element lanes bounded to 10 blocks of 128 an SM); ncu's instruction
# counts of the lanes kernels (layer_norm, rms_norm, softmax) on the old tree and this one.
. tools/device-preamble.sh
. tools/ab-lib.sh
SZ=262144x200,65536x768,65536x1024
VAR=staged,auto,lanes16/128,lanes32/128,torch
warm() {  # compile each tree's builds at once (one process a tree), timing nothing
    (cd "$1" && PYTHONPATH=/tmp/site:$1 NBKERNELS_CACHE_DIR=$1/.nbk_cache timeout 200 \
        python3 tools/softmax_lanes_ab.py --ops layer_norm --dtypes bf16,f32 --sizes 64x200,64x768,64x1024 \
        --variants staged,lanes16/128,lanes32/128 --reps 2 > /dev/null 2>&1)
}
pids=""  # waited for by pid: a bare wait also waits for the log's tee (it never ends)
for t in old b48; do warm "$PWD/_ab/$t" & pids="$pids $!"; done
warm "$PWD" & pids="$pids $!"
wait $pids
echo "warm done at ${SECONDS}s"
timing() {  # timing TREE ROUND
    local d
    d=$(ab_tree "$1")
    echo "--- $1 round $2"
    (cd "$d" && PYTHONPATH=/tmp/site:$d NBKERNELS_CACHE_DIR=$(ab_cache "$d") timeout 75 \
        python3 tools/softmax_lanes_ab.py --ops layer_norm --dtypes bf16,f32 --sizes $SZ \
        --variants $VAR --json "$out/ln_${1//\//_}_$2.json" 2>&1 | grep -v Warning)
}
for t in _ab/old . _ab/b48; do timing $t 1; done
for t in _ab/old .; do
    d=$(ab_tree $t)
    echo "--- ncu $t"
    (cd "$d" && PYTHONPATH=/tmp/site:$d NBKERNELS_CACHE_DIR=$(ab_cache "$d") timeout 80 \
        ncu --metrics smsp__inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__occupancy_limit_registers \
        -k regex:lanes python3 tools/lanes_profile.py --ops layer_norm,rms_norm,softmax --dtypes bf16 \
        --sizes 262144x200 2>&1 | grep -E "lanes|inst_executed|registers|warps_active|duration|dram__|elements a lane" | grep -v "^==PROF" )
done
for t in _ab/old .; do timing $t 2; done
echo "all done at ${SECONDS}s"
