"""``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`` (sm_75+).

Lanes 8j..8j+7 give the addresses of the 8 rows (16 bytes each) of matrix j; every
lane receives one 32-bit register per matrix: row ``lane >> 2``, columns
``2*(lane % 4)`` and ``+1`` (with ``.trans``: that column pair of the transpose).
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..arch import Arch
from . import bits, sim
from .factory import build
from .spec import InstructionSpec, Operand


def _matrix_rows(lanes, nmat, what):
    """The 8x8 b16 matrices addressed by the lanes, as uint16 arrays."""
    mats = []
    for j in range(nmat):
        rows = [sim.shared_bytes(int(lanes[8 * j + r][0]), 16, what).view(np.uint16)
                for r in range(8)]
        mats.append(np.stack(rows))
    return mats


def _make_sim(nmat, trans, name):
    def simulate(lanes):
        mats = _matrix_rows(lanes, nmat, name)
        out = []
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            regs = []
            for m in mats:
                if trans:
                    lo, hi = m[2 * t, g], m[2 * t + 1, g]
                else:
                    lo, hi = m[g, 2 * t], m[g, 2 * t + 1]
                regs.append(np.uint32(bits.join16(lo, hi)))
            out.append(tuple(regs) if nmat > 1 else regs[0])
        return out

    return simulate


def _ldmatrix(nmat, trans):
    suffix = ".trans" if trans else ""
    name = f"ldmatrix_x{nmat}" + ("_trans" if trans else "")
    spec = InstructionSpec(
        name=name,
        family="ldmatrix",
        ptx=f"ldmatrix.sync.aligned.m8n8.x{nmat}{suffix}.shared.b16 $d, [$addr];",
        outputs=(Operand("d", types.uint32, nmat, braced=True),),
        inputs=(Operand("addr", types.uint32, doc="shared-space address of this lane's row"),),
        min_arch=Arch(7, 5),
        min_ptx=(6, 5),
        memory=True,
        convergent=True,
        sass=("LDSM",),
        simulate=_make_sim(nmat, trans, name),
        warp_collective_sim=True,
        doc=(f"Load {nmat} 8x8 matrices of 16-bit elements from shared memory"
             + (", transposed" if trans else "") + "; warp-collective. Lanes 8j..8j+7 give "
             "the 16-byte-aligned row addresses of matrix j."),
    )
    return build(spec)


ldmatrix_x1 = _ldmatrix(1, False)
ldmatrix_x2 = _ldmatrix(2, False)
ldmatrix_x4 = _ldmatrix(4, False)
ldmatrix_x1_trans = _ldmatrix(1, True)
ldmatrix_x2_trans = _ldmatrix(2, True)
ldmatrix_x4_trans = _ldmatrix(4, True)

__all__ = [n for n in dir() if n.startswith("ldmatrix_")]
