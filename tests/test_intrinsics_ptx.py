"""Every probe kernel compiled for every supported arch, without a GPU.

Where the arch has all the probe's instructions, the PTX must hold each instruction's
mnemonic, ptxas must assemble it, and the SASS must hold each instruction's opcode
(HMMA, IMMA, DMMA, LDSM, LDGSTS, ...). Where the arch lacks one, compilation must fail
with nbkernels' ArchError naming the instruction, the arch it needs and the target.
"""
import numba
import numpy as np
import pytest

from nbkernels import ArchError, toolchain
from nbkernels.arch import SUPPORTED_ARCHS, Arch
from nbkernels.intrinsics import REGISTRY, probes

needs_ptxas = pytest.mark.skipif(toolchain.find_tool("ptxas") is None,
                                 reason="ptxas not installed (pip install 'nbkernels[test]')")


def _signature(probe):
    rng = np.random.default_rng()
    inp = probe.make_inputs(rng, True)
    return tuple(numba.typeof(a) for a in [*inp.values(), *probe.outputs(inp).values()])


def _lacking(probe, arch):
    return [n for n in probe.covers if not arch.satisfies(REGISTRY[n].spec.min_arch)]


@needs_ptxas
@pytest.mark.parametrize("arch", SUPPORTED_ARCHS)
@pytest.mark.parametrize("name", list(probes.PROBES))
def test_probe_compiles_to_expected_sass(name, arch):
    probe, target = probes.PROBES[name], Arch.parse(arch)
    lacking = _lacking(probe, target)
    if lacking:
        with pytest.raises(ArchError) as info:
            toolchain.compile_ptx_for(probe.kernel, _signature(probe), target)
        msg = str(info.value)
        need = REGISTRY[info.value.what.split()[0]].spec.min_arch
        assert info.value.what.split()[0] in lacking
        assert f"needs {need}" in msg and f"compiled for {target}" in msg
        return
    ptx = toolchain.compile_ptx_for(probe.kernel, _signature(probe), target)
    assert f".target {target}" in ptx
    for n in probe.covers:
        assert REGISTRY[n].spec.ptx_name in ptx, f"{n}: {REGISTRY[n].spec.ptx_name} not in PTX"
    asm = toolchain.assemble(ptx, target)
    assert asm.spill_stores == 0 and asm.spill_loads == 0
    ops = toolchain.sass_opcodes(toolchain.disassemble(asm.cubin))
    for n in probe.covers:
        for opcode in REGISTRY[n].spec.sass:
            assert any(o.startswith(opcode) for o in ops), (
                f"{n} on {target}: no {opcode}* in SASS; opcodes: {sorted(set(ops))}")
