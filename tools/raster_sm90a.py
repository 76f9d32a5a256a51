"""The sm90a default tile with other rasterization groups (``group_m``: tile-rows a group walks
along N before the next group), against cuBLAS, bf16: does the order of tiles, i.e. how many
SMs read the same A and B k-slices at once from L2, move the main loop's late stages (ncu,
session 7: ~10% of the consumers' full-barrier waits needed a retry)?

    python3 tools/raster_sm90a.py [group_m ...]
"""
import sys

from nbkernels.matmul import bench_hopper, wgmma_config as wc


def main(argv):
    groups = [int(g) for g in argv] or [4, 16, 32]
    name = bench_hopper.config_name
    bench_hopper.config_name = lambda c: name(c) + f"r{c.group_m}"  # the group in the label
    cfgs = [wc.WgmmaConfig(128, 256, 4, g) for g in groups]
    bench_hopper.prewarm(cfgs, kinds=("bf16",), layouts=((True, False),))
    bench_hopper.run([(8192, 8192, 8192), (4096, 4096, 4096), (4096, 11008, 4096),
                      (8192, 8192, 1024)], ["bfloat16"], [None] + cfgs, 20, False, False)


if __name__ == "__main__":
    main(sys.argv[1:])
