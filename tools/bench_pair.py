"""Summarise bench_hopper JSON rows of the default tile beside one other configuration, per
file: TFLOPS, the other over the default, each over cuBLAS, and both results' difference from
cuBLAS's (device scripts of session 43).

    python3 tools/bench_pair.py 128x256x4ke2 OUT/a1.json OUT/a2.json
"""
import json
import sys


def main(argv):
    cfg, *paths = argv
    key = f"nbk[{cfg}]"
    for path in paths:
        for r in json.load(open(path)):
            other = r[key]
            print(f"{path[-7:]} {r['dtype']:8s} {r['m']}x{r['n']}x{r['k']}: default {r['nbk']:.1f} "
                  f"{cfg} {other:.1f} cuBLAS {r['cublas']:.1f}  ratio {other / r['nbk']:.4f}  "
                  f"default/cuBLAS {r['nbk'] / r['cublas']:.4f}  {cfg}/cuBLAS "
                  f"{other / r['cublas']:.4f}  err {r['nbk_err']:.1e} / {r[key + '_err']:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
