"""Element types, ranks and memory layouts through the CPU runtime, against numpy."""

import ml_dtypes
import numpy as np
import pytest

import mlxc

ARITH_TYPES = {
    "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64,
}

ARITH = """
func.func @main(%a: tensor<3x4x{t}>, %b: tensor<3x4x{t}>) -> (tensor<3x4x{t}>, tensor<3x4x{t}>, tensor<3x4x{t}>, tensor<3x4xi1>) {{
  %0 = stablehlo.add %a, %b : tensor<3x4x{t}>
  %1 = stablehlo.multiply %a, %b : tensor<3x4x{t}>
  %2 = stablehlo.maximum %a, %b : tensor<3x4x{t}>
  %3 = stablehlo.compare GT, %a, %b : (tensor<3x4x{t}>, tensor<3x4x{t}>) -> tensor<3x4xi1>
  return %0, %1, %2, %3 : tensor<3x4x{t}>, tensor<3x4x{t}>, tensor<3x4x{t}>, tensor<3x4xi1>
}}
"""


def _values(dtype, rng):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=(3, 4), dtype=dt, endpoint=True)
    return rng.standard_normal((3, 4)).astype(dt)


@pytest.mark.parametrize("name", list(ARITH_TYPES))
def test_arithmetic_per_type(name):
    dtype = ARITH_TYPES[name]
    rng = np.random.default_rng(1)
    a, b = _values(dtype, rng), _values(dtype, rng)
    exe = mlxc.compile(ARITH.format(t=name))
    assert exe.signature.inputs[0].dtype == np.dtype(dtype)
    add, mul, mx, gt = exe(a, b)
    with np.errstate(over="ignore"):
        if np.dtype(dtype).kind in "iu":  # integers wrap, as in numpy
            np.testing.assert_array_equal(add, a + b)
            np.testing.assert_array_equal(mul, a * b)
        else:  # each op rounds to the element type once
            wide = np.float64
            np.testing.assert_array_equal(add, (a.astype(wide) + b.astype(wide)).astype(dtype))
            np.testing.assert_array_equal(mul, (a.astype(wide) * b.astype(wide)).astype(dtype))
    np.testing.assert_array_equal(mx, np.maximum(a, b))
    np.testing.assert_array_equal(gt, a > b)
    assert add.dtype == np.dtype(dtype) and gt.dtype == np.bool_


def test_bool():
    exe = mlxc.compile("""
    func.func @main(%a: tensor<5xi1>, %b: tensor<5xi1>) -> (tensor<5xi1>, tensor<5xi1>, tensor<5xi1>) {
      %0 = stablehlo.and %a, %b : tensor<5xi1>
      %1 = stablehlo.or %a, %b : tensor<5xi1>
      %2 = stablehlo.not %a : tensor<5xi1>
      return %0, %1, %2 : tensor<5xi1>, tensor<5xi1>, tensor<5xi1>
    }""")
    a = np.array([True, False, True, False, True])
    b = np.array([True, True, False, False, True])
    r_and, r_or, r_not = exe(a, b)
    np.testing.assert_array_equal(r_and, a & b)
    np.testing.assert_array_equal(r_or, a | b)
    np.testing.assert_array_equal(r_not, ~a)


SCALE = """
func.func @main(%x: tensor<{shape}xf32>, %s: tensor<f32>) -> tensor<{shape}xf32> {{
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<{shape}xf32>
  %0 = stablehlo.multiply %x, %b : tensor<{shape}xf32>
  return %0 : tensor<{shape}xf32>
}}
"""


def test_rank0_in_and_out():
    exe = mlxc.compile("""
    func.func @main(%a: tensor<f32>, %b: tensor<i32>) -> (tensor<f32>, tensor<i32>) {
      %0 = stablehlo.multiply %a, %a : tensor<f32>
      %1 = stablehlo.negate %b : tensor<i32>
      return %0, %1 : tensor<f32>, tensor<i32>
    }""")
    sq, neg = exe(np.float32(3.0), np.array(7, np.int32))
    assert sq.shape == () and sq == 9.0 and sq.dtype == np.float32
    assert neg.shape == () and neg == -7
    # Python scalars are weakly typed: they take the argument's type.
    sq, neg = exe(1.5, 4)
    assert sq == 2.25 and neg == -4


def test_zero_size():
    exe = mlxc.compile(SCALE.format(shape="0x5"))
    out = exe(np.zeros((0, 5), np.float32), np.float32(2))
    assert out.shape == (0, 5) and out.dtype == np.float32


@pytest.mark.parametrize("layout", ["transposed", "strided", "fortran", "big_endian", "unaligned"])
def test_non_contiguous_inputs(layout):
    rng = np.random.default_rng(2)
    exe = mlxc.compile(SCALE.format(shape="4x6"))
    if layout == "transposed":
        x = rng.standard_normal((6, 4)).astype(np.float32).T
    elif layout == "strided":
        x = rng.standard_normal((8, 12)).astype(np.float32)[::2, ::2]
    elif layout == "fortran":
        x = np.asfortranarray(rng.standard_normal((4, 6)).astype(np.float32))
    elif layout == "big_endian":
        x = rng.standard_normal((4, 6)).astype(">f4")
    else:
        raw = np.zeros(4 * 6 * 4 + 1, np.uint8)
        x = np.frombuffer(raw.data, dtype=np.float32, count=24, offset=1).reshape(4, 6)
        assert not x.flags.aligned
    expected = np.asarray(x, dtype=np.float32) * 3
    if layout == "big_endian":
        with pytest.raises(TypeError, match="expected f32"):
            exe(x, np.float32(3))  # a different dtype: say so rather than convert silently
        x = x.astype(np.float32)
    before = np.array(x, copy=True)
    np.testing.assert_array_equal(exe(x, np.float32(3)), expected)
    np.testing.assert_array_equal(x, before)


def test_outputs_are_fresh_arrays():
    exe = mlxc.compile(SCALE.format(shape="3"))
    x = np.ones(3, np.float32)
    a = exe(x, np.float32(2))
    b = exe(x, np.float32(2))
    assert a is not b and not np.shares_memory(a, b)
    a[:] = 0
    np.testing.assert_array_equal(b, [2, 2, 2])
    assert a.flags.writeable and a.flags.c_contiguous


def test_strided_copy_uses_runtime_memref_copy():
    """Updating a column writes a strided slice: generated code calls the native
    runtime's memrefCopy (MLIR ships none)."""
    src = """
    func.func @main(%x: tensor<4x5xf32>, %col: tensor<4x1xf32>, %j: tensor<i32>) -> tensor<4x5xf32> {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %0 = stablehlo.dynamic_update_slice %x, %col, %z, %j : (tensor<4x5xf32>, tensor<4x1xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>
      return %0 : tensor<4x5xf32>
    }"""
    # The CPU schedules vectorize this copy; without them it is a memref.copy of a
    # strided slice, which the runtime's memrefCopy must perform. Check both.
    with mlxc.settings.override(cpu_schedules=False):
        assert "memrefCopy" in mlxc.lower(src, stop_after="llvm")
        plain = mlxc.compile(src)
    for exe in (plain, mlxc.compile(src)):
        x = np.arange(20, dtype=np.float32).reshape(4, 5)
        col = -np.arange(1, 5, dtype=np.float32).reshape(4, 1)
        expected = x.copy()
        expected[:, 2:3] = col
        np.testing.assert_array_equal(exe(x, col, np.int32(2)), expected)
        np.testing.assert_array_equal(x, np.arange(20, dtype=np.float32).reshape(4, 5))


NARROW_INTS = {"i2": ml_dtypes.int2, "ui2": ml_dtypes.uint2, "i4": ml_dtypes.int4,
               "ui4": ml_dtypes.uint4}


@pytest.mark.parametrize("name", list(NARROW_INTS))
def test_narrow_integers(name):
    # One element per byte in and out; arithmetic wraps at the type's width.
    dtype = NARROW_INTS[name]
    info = ml_dtypes.iinfo(dtype)
    exe = mlxc.compile(f"""
    func.func @main(%a: tensor<3x4x{name}>, %b: tensor<3x4x{name}>) -> (tensor<3x4x{name}>, tensor<3x4x{name}>, tensor<3x4xi1>, tensor<3x4xi32>) {{
      %0 = stablehlo.add %a, %b : tensor<3x4x{name}>
      %1 = stablehlo.multiply %a, %b : tensor<3x4x{name}>
      %2 = stablehlo.compare LT, %a, %b : (tensor<3x4x{name}>, tensor<3x4x{name}>) -> tensor<3x4xi1>
      %3 = stablehlo.convert %a : (tensor<3x4x{name}>) -> tensor<3x4xi32>
      return %0, %1, %2, %3 : tensor<3x4x{name}>, tensor<3x4x{name}>, tensor<3x4xi1>, tensor<3x4xi32>
    }}""")
    assert exe.signature.inputs[0].dtype == np.dtype(dtype)
    rng = np.random.default_rng(0)
    wa = rng.integers(int(info.min), int(info.max), (3, 4), endpoint=True)
    wb = rng.integers(int(info.min), int(info.max), (3, 4), endpoint=True)
    a, b = wa.astype(dtype), wb.astype(dtype)
    add, mul, lt, wide = exe(a, b)
    span = int(info.max) - int(info.min) + 1

    def wrap(v):
        return ((v - int(info.min)) % span + int(info.min)).astype(np.int64)

    assert add.dtype == np.dtype(dtype) and add.shape == (3, 4)
    np.testing.assert_array_equal(add.astype(np.int64), wrap(wa + wb))
    np.testing.assert_array_equal(mul.astype(np.int64), wrap(wa * wb))
    np.testing.assert_array_equal(lt, wa < wb)
    np.testing.assert_array_equal(wide, wa.astype(np.int32))


SMALL_FLOATS = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2,
                "f8E4M3": ml_dtypes.float8_e4m3, "f8E3M4": ml_dtypes.float8_e3m4,
                "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
                "f8E8M0FNU": ml_dtypes.float8_e8m0fnu, "f6E2M3FN": ml_dtypes.float6_e2m3fn,
                "f6E3M2FN": ml_dtypes.float6_e3m2fn, "f4E2M1FN": ml_dtypes.float4_e2m1fn}


@pytest.mark.parametrize("name", list(SMALL_FLOATS))
def test_small_float_inputs_and_outputs(name):
    # Data movement and constants keep every bit (arithmetic: test_float_formats.py).
    dtype = SMALL_FLOATS[name]
    exe = mlxc.compile(f"""
    func.func @main(%a: tensor<2x3x{name}>) -> (tensor<3x2x{name}>, tensor<2x{name}>) {{
      %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3x{name}>) -> tensor<3x2x{name}>
      %1 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2x{name}>
      return %0, %1 : tensor<3x2x{name}>, tensor<2x{name}>
    }}""")
    assert exe.signature.inputs[0].dtype == np.dtype(dtype)
    a = np.array([[0.5, 1, 2], [4, 0.25, 8]], np.float32).astype(dtype)
    t, c = exe(a)
    assert t.dtype == np.dtype(dtype) and c.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(t.view(np.uint8), a.T.view(np.uint8))
    np.testing.assert_array_equal(c.astype(np.float32), [1.0, 2.0])


def test_bool_add_is_or():
    # The spec's add on i1 is logical OR, also when the folder computes it.
    src = """
    func.func @main(%a: tensor<4xi1>, %b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>) {
      %c = stablehlo.constant dense<[false, false, true, true]> : tensor<4xi1>
      %d = stablehlo.constant dense<[false, true, false, true]> : tensor<4xi1>
      %0 = stablehlo.add %a, %b : tensor<4xi1>
      %1 = stablehlo.add %c, %d : tensor<4xi1>
      return %0, %1 : tensor<4xi1>, tensor<4xi1>
    }"""
    a, b = np.array([0, 0, 1, 1], bool), np.array([0, 1, 0, 1], bool)
    run, folded = mlxc.compile(src)(a, b)
    np.testing.assert_array_equal(run, a | b)
    np.testing.assert_array_equal(folded, a | b)


def test_zero_size_with_inner_zero_dimension():
    exe = mlxc.compile("""
    func.func @main(%a: tensor<2x0x3xf32>, %b: tensor<2x0x3xi4>) -> (tensor<2x0x3xf32>, tensor<3x0x2xi4>) {
      %0 = stablehlo.add %a, %a : tensor<2x0x3xf32>
      %1 = stablehlo.transpose %b, dims = [2, 1, 0] : (tensor<2x0x3xi4>) -> tensor<3x0x2xi4>
      return %0, %1 : tensor<2x0x3xf32>, tensor<3x0x2xi4>
    }""")
    x, y = exe(np.zeros((2, 0, 3), np.float32), np.zeros((2, 0, 3), ml_dtypes.int4))
    assert x.shape == (2, 0, 3) and x.dtype == np.float32
    assert y.shape == (3, 0, 2) and y.dtype == np.dtype(ml_dtypes.int4)


@pytest.mark.parametrize("t,dtype", [("i1", np.bool_), ("i4", ml_dtypes.int4), ("ui4", ml_dtypes.uint4)])
def test_dynamic_update_slice_of_sub_byte_elements(t, dtype):
    # Found by the fuzzer: the vectorized insert of a boolean update stored a
    # vector<2xi1> as packed bits into a buffer of one byte per element, so only the
    # update's first element was written.
    exe = mlxc.compile(f"""
    func.func @main(%x: tensor<5x{t}>, %u: tensor<3x{t}>, %i: tensor<i32>) -> tensor<5x{t}> {{
      %0 = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<5x{t}>, tensor<3x{t}>, tensor<i32>) -> tensor<5x{t}>
      return %0 : tensor<5x{t}>
    }}""")
    x = np.array([1, 0, 1, 0, 0]).astype(dtype)
    u = np.array([0, 1, 1]).astype(dtype)
    for i in range(-1, 4):
        expected = x.copy()
        start = min(max(i, 0), 2)
        expected[start:start + 3] = u
        np.testing.assert_array_equal(exe(x, u, np.int32(i)), expected)
