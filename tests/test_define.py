"""The public extension API, with the worked example of docs/extending.md (lop3.b32, prmt.b32)."""
import re
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, types

import nbkernels
from nbkernels import toolchain
from nbkernels.intrinsics import define

from .simrun import run_simulated

# The worked example of docs/extending.md, read from the document itself: a three-input
# logic op and a byte permute, neither shipped by nbkernels.
DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
_blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
EXAMPLE, KERNEL = _blocks[0], _blocks[1]
ns = {}
exec(EXAMPLE + KERNEL, ns)


def expected(a, b, c, sel):
    maj = (a & b) | (a & c) | (b & c)
    data = a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))
    prm = np.zeros_like(a)
    for k in range(4):
        idx = ((sel >> np.uint32(4 * k)) & np.uint32(7)).astype(np.uint64)
        byte = (data >> (np.uint64(8) * idx)) & np.uint64(0xFF)
        prm |= (byte.astype(np.uint32) << np.uint32(8 * k))
    return np.stack([maj, a ^ b ^ c, prm])


def _inputs(n=100):
    rng = np.random.default_rng()
    a, b, c = (rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    sel = rng.integers(0, 2**16, n).astype(np.uint32) & np.uint32(0x7777)
    return a, b, c, sel


SIG = (types.uint32[:],) * 4 + (types.uint32[:, :],)


@pytest.mark.skipif(toolchain.find_tool("ptxas") is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90a"])
def test_defined_instructions_compile_and_assemble(arch):
    ptx = toolchain.compile_ptx_for(ns["kernel"], SIG, arch)
    assert "lop3.b32" in ptx and "prmt.b32" in ptx and ", 232;" in ptx
    ops = toolchain.sass_opcodes(toolchain.disassemble(toolchain.assemble(ptx, arch).cubin))
    assert any(o.startswith("LOP3") for o in ops) and any(o.startswith("PRMT") for o in ops)


def test_defined_instructions_run_in_the_simulator(tmp_path):
    a, b, c, sel = _inputs()
    np.savez(tmp_path / "in.npz", a=a, b=b, c=c, sel=sel)
    script = EXAMPLE + KERNEL + f'''
d = np.load({str(tmp_path / "in.npz")!r})
out = np.full((3, d["a"].size), 0xDEADBEEF, np.uint32)
kernel[4, 32](d["a"], d["b"], d["c"], d["sel"], out)
np.save({str(tmp_path / "out.npy")!r}, out)
'''
    proc = run_simulated(["-c", script], timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = np.load(tmp_path / "out.npy")
    np.testing.assert_array_equal(got, expected(a, b, c, sel))


@pytest.mark.gpu
def test_defined_instructions_on_gpu():
    a, b, c, sel = _inputs(1000)
    out = np.full((3, a.size), 0xDEADBEEF, np.uint32)
    ns["kernel"][8, 128](a, b, c, sel, out)
    np.testing.assert_array_equal(out, expected(a, b, c, sel))


def test_define_rejects_undeclared_operands_and_bad_specs():
    with pytest.raises(nbkernels.IntrinsicUsageError, match=r"template uses \$z"):
        define("bad_op1", "add.u32 $d, $a, $z;", outputs=["d:u32"], inputs=["a:u32"])
    with pytest.raises(nbkernels.IntrinsicUsageError, match=r"has type 'u7'"):
        define("bad_op2", "add.u32 $d, $a, $a;", outputs=["d:u32"], inputs=["a:u7"])
    with pytest.raises(nbkernels.IntrinsicUsageError, match=r"unique"):
        define("bad_op3", "add.u32 $d, $d, $d;", outputs=["d:u32"], inputs=["d:u32"])
    with pytest.raises(nbkernels.IntrinsicUsageError, match=r"already exists with another spec"):
        define("lop3_b32", "lop3.b32 $d, $a, $a, $a, 0;", outputs=["d:u32"], inputs=["a:u32"])


def test_defined_instruction_arch_gate():
    brev = define("brev_b32_sm90_only", "brev.b32 $d, $a;", outputs=["d:u32"], inputs=["a:u32"],
                  min_arch="sm_90", simulate=lambda a: a)

    def k(x):
        x[0] = brev(x[0])

    with pytest.raises(nbkernels.ArchError, match=r"needs sm_90 or newer.*compiled for sm_80"):
        cuda.compile_ptx(k, (types.uint32[:],), cc=(8, 0))
