# Sourced by device scripts (tools/device_s21d.sh, device_s40b.sh): the sm90a GPU file in three
# parts that each fit a device call once their tiles are built in parallel first.
#   sm90a_part N   sets sel (the part's pytest -k expression) and cfgs (its bench_hopper
#                  configurations, for --prewarm-only): 1 the deferred sweep, split tail,
#                  persistent tiles, dispatch and fused epilogue; 2 the 200-case random sweep;
#                  3 the rest (guarded and offloaded sweeps, clusters, repeat calls, the map
#                  cache, torch)
sm90a_part() {
    local main="random_sweep_sm90a and not guarded and not offloaded and not deferred"
    local first="deferred or streamk or many_tiles or default_dispatch or fused_bias_gelu or splits_a_short"
    case $1 in
    1) cfgs=128x256x4,128x256x4e2,128x128x6e2,256x128x4e1,128x256x3e3,64x128x4e2,128x256x3d2e4,128x256x4k,128x256x4ke2,128x256x3o
       sel="$first" ;;
    2) cfgs=128x128x6,256x128x4,256x128x4w,64x128x4,128x128x6p,64x256x5p,128x256x4d2
       sel="$main" ;;
    *) cfgs=128x256x4g,128x128x6g,256x128x4g,256x128x4wg,64x128x4g,128x128x6pg,64x256x5pg,128x256x4gd2,128x128x4o,256x128x3o,256x128x3wo,64x128x4o,128x256x4c2,128x128x6c2,256x128x4wc2,128x128x6pc2,128x64x6c2
       sel="not ($main) and not ($first)" ;;
    esac
}
