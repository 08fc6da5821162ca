"""The runtime's allocator for generated code's temporaries (runtime/mlxc_alloc.c).

Large freed blocks are kept and handed to the next request they fit, so a program's
temporaries are not page-faulted in again on every call; small ones go to malloc."""

import ctypes

import numpy as np
import pytest

import mlxc
from mlxc.runtime import native

KIB = 1024


@pytest.fixture(scope="module")
def alloc():
    lib = native.load()
    lib._mlir_memref_to_llvm_alloc.argtypes = [ctypes.c_size_t]
    lib._mlir_memref_to_llvm_alloc.restype = ctypes.c_void_p
    lib._mlir_memref_to_llvm_aligned_alloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    lib._mlir_memref_to_llvm_aligned_alloc.restype = ctypes.c_void_p
    lib._mlir_memref_to_llvm_free.argtypes = [ctypes.c_void_p]
    lib._mlir_memref_to_llvm_free.restype = None
    lib.mlxc_kept_bytes.restype = ctypes.c_size_t
    return lib


def test_a_freed_large_block_serves_the_next_request_it_fits(alloc):
    # Sizes no test program's temporaries come near, so blocks other programs in this
    # process left in the cache cannot serve these requests.
    mib = 1 << 20
    a = alloc._mlir_memref_to_llvm_alloc(37 * mib)
    assert a % 64 == 0
    ctypes.memset(a, 7, 37 * mib)  # the whole block is usable
    before = alloc.mlxc_kept_bytes()
    alloc._mlir_memref_to_llvm_free(a)
    assert alloc.mlxc_kept_bytes() == before + 37 * mib
    b = alloc._mlir_memref_to_llvm_alloc(30 * mib)  # fits, wastes less than half
    assert b == a and alloc.mlxc_kept_bytes() == before
    c = alloc._mlir_memref_to_llvm_alloc(38 * mib)  # does not fit: a new block
    assert c not in (a, 0)
    alloc._mlir_memref_to_llvm_free(b)
    d = alloc._mlir_memref_to_llvm_alloc(10 * mib)  # would waste most of the kept one
    assert d != a
    for p in (c, d):
        alloc._mlir_memref_to_llvm_free(p)
    assert alloc.mlxc_kept_bytes() >= 37 * mib


def test_small_blocks_are_not_kept_and_alignment_is_honoured(alloc):
    before = alloc.mlxc_kept_bytes()
    p = alloc._mlir_memref_to_llvm_alloc(100)
    alloc._mlir_memref_to_llvm_free(p)
    assert alloc.mlxc_kept_bytes() == before
    q = alloc._mlir_memref_to_llvm_aligned_alloc(256, 1000)
    assert q != 0
    alloc._mlir_memref_to_llvm_free(q)  # over-aligned blocks free cleanly too
    alloc._mlir_memref_to_llvm_free(None)


def test_kept_bytes_stay_bounded(alloc):
    blocks = [alloc._mlir_memref_to_llvm_alloc(40 << 20) for _ in range(10)]
    for p in blocks:
        alloc._mlir_memref_to_llvm_free(p)
    assert alloc.mlxc_kept_bytes() <= 256 << 20


def test_programs_with_large_temporaries_reuse_them_and_stay_right(alloc):
    # A padded NCHW convolution has temporaries of several hundred KiB.
    jax = pytest.importorskip("jax")
    from jax import lax

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    exe = mlxc.compile(jax.jit(conv).lower(x, w).as_text())
    want = np.asarray(jax.jit(conv)(x, w))
    for _ in range(3):
        np.testing.assert_allclose(exe(x, w), want, rtol=1e-4, atol=1e-4)
    assert exe.memory_stats()["temp_bytes"] >= 256 * KIB
    assert alloc.mlxc_kept_bytes() >= 256 * KIB
