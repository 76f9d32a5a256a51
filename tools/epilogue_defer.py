"""An experiment on the sm90a GEMM's epilogue (perf-notes s16), for measurement: the default
tile with the global stores of half of each warp's chunks deferred into the first k-tiles of
its next tile, where they run between the consumers' wgmma issue and wait.

    python tools/epilogue_defer.py [bench_hopper arguments]
    python tools/epilogue_defer.py --profile MxNxK   (under ncu: tools/profile_ncu.py)

Per 64-column chunk the staged epilogue converts, stages (stmatrix), reads back and stores
16 bytes a lane. Here chunks 0 and 1 go so; chunks 2 and 3 are staged into two 2 KB buffers a
warp and left there (32 KB a block beside the 192 KB ring, inside an H100's 227 KB). The next
tile's first and second k-tiles store one each after their wgmma are issued; a tile with
fewer k-tiles, and the block's last tile, store what is left before going on. Only for the
cooperative, unclustered 64-row-consumer tiles without offload or split tail (the default);
the kernel's own code is patched in this process (its own kernel cache), nothing ships.
The benchmark's error column checks the results against cuBLAS.
"""
import os
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from epilogue_knockout import patched, run  # noqa: E402


def apply():
    from nbkernels.matmul import wgmma_kernel as wk

    ns = vars(wk)
    # two 2 KB buffers a consumer warp
    exec(patched(wk.staging_bytes, [  # noqa: S102
        ("per_warp = WARP_STAGING * (", "per_warp = 2 * WARP_STAGING * (")]), ns)
    # chunks 0 and 1 as before; 2 and 3 staged into buf and buf + 2 KB, not stored
    exec(patched(wk.staged_epilogue, [  # noqa: S102
        ('src += [f"    sbase = buf + {ch * WARP_STAGING if offload else 0} + "',
         'src += [f"    sbase = buf + {(ch - 2) * WARP_STAGING if ch >= 2 else 0} + "'),
        ("for i in range(0 if offload else 4):", "for i in range(0 if ch >= 2 else 4):")]), ns)
    flush = (
        "def flush(buf, lane, base, rows, ld, col):\n"
        "    for i in range(4):\n"
        "        gr = 4 * i + (lane >> 3)\n"
        "        v = I.ld_shared_v4(buf + gr * 128 + (((lane & 7) ^ (gr & 7)) << 4))\n"
        "        I.st_global_cs_v4_if(base + gr * ld + (col + 8 * (lane & 7)) * 2,\n"
        "                             (v[0], v[1], v[2], v[3]), uint32(gr < rows))\n"
        "    I.warp_sync()\n")
    exec(flush, ns)  # noqa: S102
    ns["flush"] = wk._dev(ns["flush"])
    one = ("flush(stage_at + (2 - pend) * 2048, lane, p_base, p_rows, p_ld, 256 - 64 * pend)\n"
           "pend -= 1")  # the older pending chunk: 2 from buf, then 3 from buf + 2 KB
    pending = "while pend > 0:\n" + textwrap.indent(one, "    ")
    exec(patched(wk.build_kernel, [  # noqa: S102
        ('"fop": I.wgmma_fence_operand_f32,', '"fop": I.wgmma_fence_operand_f32, "flush": flush,'),
        # the experiment's scope
        ("    if STAGED and not cfg.staged:",
         "    assert not (PP or CL or SK or cfg.offload or MW != 1 or BN != 256), cfg\n"
         "    if STAGED and not cfg.staged:"),
        # a staged tile leaves chunks 2 and 3 pending
        ("""                      f"alpha, d_at, ldd_r * OSZ, {buf}, extra)",""",
         """                      f"alpha, d_at, ldd_r * OSZ, {buf}, extra)",
                      "    pend = 2",
                      f"    p_base = d_at + (m0 + row0 + {64 * w} + warp * 16) * ldd_r * OSZ + n0 * OSZ",
                      f"    p_rows = M - (m0 + row0 + {64 * w} + warp * 16)",
                      "    p_ld = ldd_r * OSZ","""),
        # two 2 KB buffers a warp
        ('else f"(ct // 32 + 4 * cw) * {WARP_STAGING}")',
         'else f"(ct // 32 + 4 * cw) * {2 * WARP_STAGING}")'),
        # what the tile before left: stored before this tile's own epilogue restages
        ("    epilogue_src = [\"c_at = I.gmem_addr(C, 0) + b * sc * OSZ\",",
         "    epilogue_src = PENDING.split(chr(10)) + [\"c_at = I.gmem_addr(C, 0) + b * sc * OSZ\","),
        # nothing pending before the first tile
        ("        j = -1\n{units(8)}",
         "        j = -1\n        pend = 0\n"
         "        p_base = I.gmem_addr(D, 0) + 0 * sd * OSZ\n"
         "        p_rows = M - M\n        p_ld = ldd_r * OSZ\n{units(8)}"),
        # one pending chunk stored per k-tile, after its wgmma are issued
        ("                I.wgmma_commit_group()\n",
         "                I.wgmma_commit_group()\n"
         "                if pend > 0:\n" + textwrap.indent(one, " " * 20) + "\n"),
        # the block's last tile
        ("{chr(10).join([\" \" * 12 + x for x in epilogue_src] + [\"    \" + x for x in sync if CL])}\n'''",
         "{chr(10).join([\" \" * 12 + x for x in epilogue_src] + [\"    \" + x for x in sync if CL])}\n"
         "{textwrap.indent(PENDING, ' ' * 8)}\n'''"),
    ]), ns)
    ns["PENDING"] = pending
    ns["textwrap"] = textwrap


if __name__ == "__main__":
    os.environ["NBKERNELS_CACHE_DIR"] = tempfile.mkdtemp(prefix="nbk-defer-")
    apply()
    print("epilogue experiment: half the chunks' stores deferred", flush=True)
    sys.exit(run(sys.argv[1:]))
