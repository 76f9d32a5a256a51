"""Does the assembler serialize the sm90a GEMM's wgmma? Builds the kernel's PTX with this
machine's NVVM, assembles it with nvJitLink and with ptxas where present, and prints each
assembler's wgmma warnings and the SASS count of HGMMA and WARPGROUP.DEPBAR (a wait after
every HGMMA = serialized), and the route launch.build takes on this machine.

    python3 tools/wgmma_serial_check.py [outdir] [configs...]
"""
import os
import re
import sys

from numba import cuda

from nbkernels import aot, launch, toolchain
from nbkernels.matmul import run, wgmma_config, wgmma_kernel
from nbkernels.matmul.bench_hopper import config_name, parse_config
from numba.core import types


def _has_driver():
    try:
        from numba.cuda.cudadrv.driver import driver

        driver.get_version()
        return True
    except Exception:
        return False


def main(argv):
    out = argv[0] if argv else "/tmp"
    cfgs = [parse_config(c) for c in argv[1:]] or [wgmma_config.DEFAULT]
    from importlib import metadata as md
    for dist in ("nvidia-nvvm", "nvidia-nvjitlink", "cuda-toolkit"):
        try:
            print(dist, md.version(dist))
        except md.PackageNotFoundError:
            print(dist, "not installed as a wheel")
    for cfg in cfgs:
        k = wgmma_kernel.build_kernel(cfg, "bf16", True, False, None, 0, True)
        ptx, _ = cuda.compile_ptx(k.py_func, run._wgmma_sig(types.Tuple(())), cc=(9, 0, "a"),
                                  launch_bounds=k.nbk_launch_bounds)
        name = config_name(cfg)
        path = os.path.join(out, f"wgmma_{name}.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        assembled = [("nvJitLink", lambda: aot._assemble_nvjitlink(ptx, wgmma_kernel.SM90A))]
        if toolchain.find_tool("ptxas"):
            assembled.append(("ptxas", lambda: toolchain.assemble(ptx, wgmma_kernel.SM90A)))
        for how, fn in assembled:
            try:
                asm = fn()
            except Exception as e:  # e.g. a ptxas older than the PTX
                print(f"{name} {how}: failed: {str(e).splitlines()[0][:200]}")
                continue
            ops = toolchain.sass_opcodes(toolchain.disassemble(asm.cubin))
            print(f"{name} {how}: regs={asm.registers} "
                  f"HGMMA={sum(o.startswith('HGMMA') for o in ops)} "
                  f"DEPBAR={sum('DEPBAR' in o for o in ops)}")
            for line in asm.log.splitlines():
                if re.search(r"wgmma|serializ|C75", line, re.I):
                    print(f"  {how}:", line.strip()[:160])
        print("  route chosen by launch.build:", launch.whole_program_route(ptx)
              if _has_driver() else "(no driver here)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
