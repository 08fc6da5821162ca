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


def _empty_cache(alloc) -> list:
    """Take every block earlier programs in this process left in the cache (held, so
    none comes back): with all 16 slots full, a free replaces the smallest kept block
    and the byte counts below would be off by it. A request of s bytes takes a kept
    block of s to 2s bytes, so sizes growing by less than 2x reach every one."""
    held, size = [], 64 * KIB
    while size <= 256 << 20:
        while alloc.mlxc_kept_bytes():
            before = alloc.mlxc_kept_bytes()
            held.append(alloc._mlir_memref_to_llvm_alloc(size))  # freed, it would be kept
            if alloc.mlxc_kept_bytes() == before:
                break  # no kept block of size to 2 * size: the next size
        size = size * 7 // 4
    assert alloc.mlxc_kept_bytes() == 0
    return held


def test_a_freed_large_block_serves_the_next_request_it_fits(alloc):
    # Sizes no test program's temporaries come near, so blocks other programs in this
    # process left in the cache cannot serve these requests.
    mib = 1 << 20
    held = _empty_cache(alloc)
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
    for p in held:
        alloc._mlir_memref_to_llvm_free(p)


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


# A temporary that cannot be allocated (1e11 elements: 400 GB) ends the call with a
# MemoryError naming its size, and the process goes on: the allocator's failure
# unwinds to the runtime's checked call (mlxc_call_checked) instead of handing
# generated code a NULL.
_HUGE_TEMPORARIES = {
    "broadcast": """func.func @main(%x: tensor<f32>, %i: tensor<i64>) -> tensor<4xf32> {
  %y = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<100000000000xf32>
  %e = stablehlo.exponential %y : tensor<100000000000xf32>
  %c = stablehlo.cosine %e : tensor<100000000000xf32>
  %d = stablehlo.add %c, %e : tensor<100000000000xf32>
  %s = stablehlo.dynamic_slice %d, %i, sizes = [4] : (tensor<100000000000xf32>, tensor<i64>) -> tensor<4xf32>
  %t = stablehlo.dynamic_slice %c, %i, sizes = [4] : (tensor<100000000000xf32>, tensor<i64>) -> tensor<4xf32>
  %u = stablehlo.multiply %s, %t : tensor<4xf32>
  return %u : tensor<4xf32>
}""",
    "sort_of_iota": """func.func @main(%x: tensor<f32>, %i: tensor<i64>) -> tensor<1xf32> {
  %n = stablehlo.iota dim = 0 : tensor<100000000000xf32>
  %s = "stablehlo.sort"(%n) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<100000000000xf32>) -> tensor<100000000000xf32>
  %first = stablehlo.slice %s [0:1] : (tensor<100000000000xf32>) -> tensor<1xf32>
  return %first : tensor<1xf32>
}""",
}


@pytest.mark.parametrize("name", sorted(_HUGE_TEMPORARIES))
def test_a_temporary_that_cannot_be_allocated_raises_memory_error(name):
    exe = mlxc.compile(_HUGE_TEMPORARIES[name])
    for _ in range(2):  # and again: nothing of the first failure is left in the way
        with pytest.raises(MemoryError, match=r"main\(\): a temporary of 400,000,000,\d+ "
                                              r"bytes \(372\.5 GiB\) could not be allocated"):
            exe(np.float32(1), np.int64(5))
    small = mlxc.compile("func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
                         "  %y = stablehlo.add %x, %x : tensor<3xf32>\n"
                         "  return %y : tensor<3xf32>\n}")
    np.testing.assert_array_equal(small(np.arange(3, dtype=np.float32)), [0, 2, 4])


def test_a_tensor_beyond_64_bit_sizes_is_refused_by_name():
    src = ("func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
           "  %y = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> "
           "tensor<100000000000x100000000000xf32>\n"
           "  %z = stablehlo.reduce(%y init: %x) applies stablehlo.add across dimensions = [0, 1]"
           " : (tensor<100000000000x100000000000xf32>, tensor<f32>) -> tensor<f32>\n"
           "  return %z : tensor<f32>\n}\n")
    with pytest.raises(mlxc.CompileError, match=r"(?s)<string>:2:8: error: .*"
                                                r"tensor<100000000000x100000000000xf32> holds "
                                                r"40,000,000,000,000,000,000,000 bytes.*"
                                                r"stablehlo.broadcast_in_dim"):
        mlxc.compile(src)
