"""Every probe kernel compiled for every supported arch, without a GPU.

Where the arch has all the probe's instructions, the PTX must hold each instruction's
mnemonic, ptxas must assemble it, and the SASS must hold each instruction's opcode
(HMMA, IMMA, DMMA, LDSM, LDGSTS, HGMMA, UTMALDG, ...). Where the arch lacks one, compilation
must fail with nbkernels' ArchError naming the instruction, the arch it needs and the target;
archs that lack the same instructions are checked once (the sm_90 probes fail alike on
sm_75 .. sm_89, and each of those compiles costs seconds).
"""
import re

import numba
import numpy as np
import pytest
from numba import cuda

from nbkernels import ArchError, toolchain
from nbkernels.arch import SUPPORTED_ARCHS, Arch
from nbkernels.intrinsics import REGISTRY, probes

needs_ptxas = pytest.mark.skipif(toolchain.find_tool("ptxas") is None,
                                 reason="ptxas not installed (pip install 'nbkernels[test]')")


def _signature(probe):
    rng = np.random.default_rng()
    inp = probe.make_inputs(rng, True)
    return tuple(numba.typeof(a) for a in [*inp.values(), *probe.outputs(inp).values()]) \
        + tuple(getattr(probe, "extra_types", ()))


def _compile(probe, target):
    bounds = getattr(probe, "launch_bounds", None)  # setmaxnreg needs them to take effect
    if bounds is None:
        return toolchain.compile_ptx_for(probe.kernel, _signature(probe), target)
    return cuda.compile_ptx(probe.kernel.py_func, _signature(probe), cc=target.cc,
                            launch_bounds=bounds)[0]


def _lacking(probe, arch):
    return [n for n in probe.covers if not arch.satisfies(REGISTRY[n].spec.min_arch)]


def _cases():
    """(probe, arch): every arch that has the probe's instructions, and the first arch of each
    set of archs that lack the same ones."""
    cases = []
    for name, probe in probes.PROBES.items():
        seen = set()
        for arch in SUPPORTED_ARCHS:
            lacking = tuple(_lacking(probe, Arch.parse(arch)))
            if lacking and lacking in seen:
                continue
            seen.add(lacking)
            cases.append((name, arch))
    return cases


@needs_ptxas
@pytest.mark.parametrize("name,arch", _cases())
def test_probe_compiles_to_expected_sass(name, arch):
    probe, target = probes.PROBES[name], Arch.parse(arch)
    lacking = _lacking(probe, target)
    if lacking:
        with pytest.raises(ArchError) as info:
            _compile(probe, target)
        msg = str(info.value)
        need = REGISTRY[info.value.what.split()[0]].spec.min_arch
        assert info.value.what.split()[0] in lacking
        assert f"needs {need}" in msg and f"compiled for {target}" in msg
        return
    ptx = _compile(probe, target)
    assert f".target {target}" in ptx
    for n in probe.covers:
        spec = REGISTRY[n].spec
        assert re.search(spec.ptx_pattern, ptx), f"{n}: {spec.ptx_name} not in PTX"
    asm = toolchain.assemble(ptx, target)
    assert "C7508" not in asm.log, asm.log  # an instruction ptxas ignored (setmaxnreg)
    assert asm.spill_stores == 0 and asm.spill_loads == 0
    ops = toolchain.sass_opcodes(toolchain.disassemble(asm.cubin))
    for n in probe.covers:
        for opcode in REGISTRY[n].spec.sass:
            assert any(o.startswith(opcode) for o in ops), (
                f"{n} on {target}: no {opcode}* in SASS; opcodes: {sorted(set(ops))}")


# The sm_90 f64 shapes (PTX ISA 7.8): each assembles to its own DMMA shape, not to m8n8k4 ones,
# and sm_80 .. sm_89, which have m8n8k4.f64 only, refuse them with the typed error.
SM90_F64 = {"mma_m16n8k4_f64": "DMMA.16x8x4", "mma_m16n8k8_f64": "DMMA.16x8x8",
            "mma_m16n8k16_f64": "DMMA.16x8x16"}


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("name", sorted(SM90_F64))
def test_sm90_f64_mma_assembles_to_its_dmma_shape(name, arch):
    target = Arch.parse(arch)
    ptx = _compile(probes.PROBES[name], target)
    assert re.search(r"mma\.sync\.aligned\.m16n8k\d+\.row\.col\.f64\.f64\.f64\.f64", ptx)
    sass = toolchain.disassemble(toolchain.assemble(ptx, target).cubin)
    dmma = set(re.findall(r"\bDMMA\.[\dx]+", sass))
    assert dmma == {SM90_F64[name]}, (name, arch, dmma)


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
@pytest.mark.parametrize("name", sorted(SM90_F64))
def test_sm90_f64_mma_is_refused_below_sm90(name, arch):
    with pytest.raises(ArchError, match=rf"{name} \(mma\.sync\.aligned\.m16n8k\d+\.row\.col\.f64"
                                        rf"\.f64\.f64\.f64\) needs sm_90 or newer, but this "
                                        rf"kernel is being compiled for {arch}"):
        _compile(probes.PROBES[name], Arch.parse(arch))
