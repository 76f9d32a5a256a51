"""wgmma shared-memory descriptors and swizzles, against the PTX ISA's bit table (no GPU).

Expected words are written out from the table ("Matrix Descriptor Format", sm_90): start
address >> 4 in bits 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45, base offset in 49-51, layout
type in 62-63 (1 = 128-byte, 2 = 64-byte, 3 = 32-byte swizzle).
"""
import numba
import numpy as np
import pytest

from nbkernels.intrinsics import descriptors as D
from nbkernels.intrinsics import wgmma_probes


@pytest.mark.parametrize("fields,word", [
    # addr 0x400 -> 0x40; LBO 16 -> 1 << 16; SBO 1024 -> 64 << 32; 128B swizzle -> 1 << 62
    ((0x400, 16, 1024, D.SWIZZLE_128B, 0), 0x4000_0040_0001_0040),
    # every field at its maximum fills exactly its bits
    ((0x3FFF0, 0, 0, 0, 0), 0x3FFF),
    ((0, 0x3FFF0, 0, 0, 0), 0x3FFF << 16),
    ((0, 0, 0x3FFF0, 0, 0), 0x3FFF << 32),
    ((0, 0, 0, 0, 7), 0x7 << 49),
    ((0, 0, 0, D.SWIZZLE_32B, 0), 0x3 << 62),
    ((0x1230, 256, 512, D.SWIZZLE_64B, 0), (0x123) | (16 << 16) | (32 << 32) | (2 << 62)),
])
def test_encode_matches_the_ptx_bit_table(fields, word):
    assert D.encode_desc(*fields) == word
    f = D.decode_desc(word)
    assert (f.start, f.lbo, f.sbo, f.swizzle, f.base_offset) == fields


def test_device_helper_types_as_uint64_and_matches_the_host_twin():
    """The device function's arithmetic, typed by numba (uint64 mixed with int64 would turn
    into float64 and lose bits): compiled here for the CPU, it must give the host's words."""
    cpu = numba.njit(D._encode)
    rng = np.random.default_rng()
    for _ in range(200):
        addr, lbo, sbo = (int(v) * 16 for v in rng.integers(0, 2**14, 3))
        sw, base = int(rng.integers(0, 4)), int(rng.integers(0, 8))
        want = D.encode_desc(addr, lbo, sbo, sw, base)
        assert int(cpu(np.uint32(addr), lbo, sbo, sw, base)) == want


@pytest.mark.parametrize("kw,msg", [
    (dict(addr=8), r"addr must be a multiple of 16"),
    (dict(lbo=1 << 18), r"lbo must be a multiple of 16 in \[0, 262144\)"),
    (dict(swizzle=128), r"swizzle must be a layout type code"),
    (dict(base_offset=8), r"base_offset must be in \[0, 7\]"),
])
def test_encode_rejects_fields_that_do_not_fit(kw, msg):
    args = dict(addr=0, lbo=16, sbo=1024, swizzle=D.SWIZZLE_128B, base_offset=0)
    args.update(kw)
    with pytest.raises(ValueError, match=msg):
        D.encode_desc(**args)


@pytest.mark.parametrize("span,addr,want", [
    (128, 0x080, 0x090), (128, 0x3F0, 0x380), (128, 0x405, 0x405), (128, 0x4B3, 0x4A3),
    (64, 0x080, 0x090), (64, 0x100, 0x120), (64, 0x180, 0x1B0), (64, 0x200, 0x200),
    (32, 0x080, 0x090), (32, 0x100, 0x100), (32, 0x180, 0x190), (0, 0x190, 0x190),
])
def test_swizzle_moves_16_byte_chunks_by_the_row_bits(span, addr, want):
    # Swizzle<b,4,3>: address bits [4, 4+b) XOR bits [7, 7+b)
    assert D.swizzle_address(addr, span) == want


def _unique(mn, kt, esize):
    ids = np.arange(mn * kt, dtype=np.uint64).reshape(mn, kt) + 1
    return ids.astype({1: np.uint8, 2: np.uint16, 4: np.uint32}[esize])


# only 16-bit operands may be MN-major (wgmma's imm-trans)
LAYOUTS = [(mn_major, span, esize) for mn_major in (False, True) for span in (0, 32, 64, 128)
           for esize in (1, 2, 4) if esize == 2 or not mn_major]


@pytest.mark.parametrize("mn_major,span,esize", LAYOUTS)
def test_descriptor_decoding_finds_what_the_tile_layout_placed(mn_major, span, esize):
    """Two formulations of the canonical layouts must agree: the probes place a tile from its
    shape, the simulator reads it back from the descriptor's fields."""
    mn, k = 64, 32 // esize
    kt = span // esize if (span and not mn_major) else k
    tile = _unique(mn, kt, esize) if esize != 1 else (np.arange(mn * kt) % 251 + 1).astype(
        np.uint8).reshape(mn, kt)
    image, lbo, sbo = wgmma_probes._place(tile, mn_major, span)
    assert (lbo, sbo) == D.dense_tile_strides(mn_major, span, esize, mn, kt)
    for ks in range(kt // k):
        desc = D.encode_desc(ks * k * esize, lbo, sbo, D.swizzle_code(span))
        addrs = D.element_offsets(desc, esize, mn, k, mn_major)
        got = image[addrs[..., None] + np.arange(esize)].copy().view(tile.dtype)[..., 0]
        np.testing.assert_array_equal(got, tile[:, ks * k:(ks + 1) * k])


def test_decoding_with_another_swizzle_reads_other_elements():
    """The comparison above can fail: a 128-byte-swizzled tile read as 64-byte swizzled."""
    tile = _unique(64, 64, 2)
    image, lbo, sbo = wgmma_probes._place(tile, False, 128)
    desc = D.encode_desc(0, lbo, sbo, D.SWIZZLE_64B)
    addrs = D.element_offsets(desc, 2, 64, 16, False)
    got = image[addrs[..., None] + np.arange(2)].copy().view(np.uint16)[..., 0]
    assert (got != tile[:, :16]).any()


def test_dense_tile_strides():
    assert D.dense_tile_strides(False, 128, 2, 128, 64) == (16, 1024)  # LBO unused
    assert D.dense_tile_strides(True, 128, 2, 128, 64) == (64 * 128, 1024)
    assert D.dense_tile_strides(False, 0, 2, 64, 16) == (8 * 128, 128)
    assert D.dense_tile_strides(True, 0, 2, 64, 16) == (8 * 128, 128)
