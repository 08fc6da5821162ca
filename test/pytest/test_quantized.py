"""Quantized types (`!quant.uniform<storage:expressed, scale:zero_point>`).

The import stage lowers quantized ops to math on the storage integers with
`stablehlo-legalize-quant-to-math`, as the StableHLO interpreter does, so results
must equal the interpreter's exactly. Programs taking and returning floats go
through `oracle.interpret`; programs with quantized arguments (passed as their
storage integers) through `stablehlo.eval_module` directly, and against a numpy
model of the spec's dequantize-op-quantize, which integer requantization may
miss by one quantum.
"""

import os
import re

import numpy as np
import pytest

import mlxc
from mlxc._mlir import ir, new_context, stablehlo
from mlxc.conformance import oracle

Q_A = "!quant.uniform<i8:f32, 0.05:-3>"
Q_B = "!quant.uniform<i8:f32, 0.025:7>"
Q_SUM = "!quant.uniform<i8:f32, 0.05:-1>"


def quantize(x, scale, zero_point, lo=-128, hi=127):
    """The spec's uniform quantization, in float64 (exact for these f32 inputs)."""
    q = np.rint(x.astype(np.float64) / scale + zero_point)  # rint: round half to even
    return np.clip(q, lo, hi)


def dequantize(q, scale, zero_point):
    return (q.astype(np.float64) - zero_point) * scale


def rng_inputs(*shapes, seed=0, spread=4.0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * spread).astype(np.float32) for s in shapes]


# Float in, float out: each program quantizes its inputs and dequantizes its results.
PROGRAMS = {
    "add": ((8, 5), (8, 5), f"""
func.func @main(%a: tensor<8x5xf32>, %b: tensor<8x5xf32>) -> tensor<8x5xf32> {{
  %qa = stablehlo.uniform_quantize %a : (tensor<8x5xf32>) -> tensor<8x5x{Q_A}>
  %qb = stablehlo.uniform_quantize %b : (tensor<8x5xf32>) -> tensor<8x5x{Q_B}>
  %s = stablehlo.add %qa, %qb : (tensor<8x5x{Q_A}>, tensor<8x5x{Q_B}>) -> tensor<8x5x{Q_SUM}>
  %r = stablehlo.uniform_dequantize %s : (tensor<8x5x{Q_SUM}>) -> tensor<8x5xf32>
  return %r : tensor<8x5xf32>
}}"""),
    # Requantizing to another scale, a narrowed storage range, and data movement
    # (transpose, reshape) on the storage integers.
    "requantize_narrow_range": ((4, 6), None, f"""
func.func @main(%a: tensor<4x6xf32>) -> tensor<6x2x2xf32> {{
  %q = stablehlo.uniform_quantize %a : (tensor<4x6xf32>) -> tensor<4x6x{Q_A}>
  %r = stablehlo.uniform_quantize %q : (tensor<4x6x{Q_A}>) -> tensor<4x6x!quant.uniform<i8<-7:7>:f32, 0.3:2>>
  %t = stablehlo.transpose %r, dims = [1, 0] : (tensor<4x6x!quant.uniform<i8<-7:7>:f32, 0.3:2>>) -> tensor<6x4x!quant.uniform<i8<-7:7>:f32, 0.3:2>>
  %s = stablehlo.reshape %t : (tensor<6x4x!quant.uniform<i8<-7:7>:f32, 0.3:2>>) -> tensor<6x2x2x!quant.uniform<i8<-7:7>:f32, 0.3:2>>
  %d = stablehlo.uniform_dequantize %s : (tensor<6x2x2x!quant.uniform<i8<-7:7>:f32, 0.3:2>>) -> tensor<6x2x2xf32>
  return %d : tensor<6x2x2xf32>
}}"""),
    # One scale and zero point per column.
    "per_axis": ((5, 3), None, """
func.func @main(%a: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %q = stablehlo.uniform_quantize %a : (tensor<5x3xf32>) -> tensor<5x3x!quant.uniform<i8:f32:1, {0.1:-30,0.5:-20,0.02:4}>>
  %d = stablehlo.uniform_dequantize %q : (tensor<5x3x!quant.uniform<i8:f32:1, {0.1:-30,0.5:-20,0.02:4}>>) -> tensor<5x3xf32>
  return %d : tensor<5x3xf32>
}"""),
    "dot_general_i32_result": ((3, 16), (16, 4), """
func.func @main(%a: tensor<3x16xf32>, %b: tensor<16x4xf32>) -> tensor<3x4xf32> {
  %qa = stablehlo.uniform_quantize %a : (tensor<3x16xf32>) -> tensor<3x16x!quant.uniform<i8:f32, 0.05>>
  %qb = stablehlo.uniform_quantize %b : (tensor<16x4xf32>) -> tensor<16x4x!quant.uniform<i8:f32, 0.04>>
  %p = stablehlo.dot_general %qa, %qb, contracting_dims = [1] x [0] : (tensor<3x16x!quant.uniform<i8:f32, 0.05>>, tensor<16x4x!quant.uniform<i8:f32, 0.04>>) -> tensor<3x4x!quant.uniform<i32:f32, 0.002>>
  %d = stablehlo.uniform_dequantize %p : (tensor<3x4x!quant.uniform<i32:f32, 0.002>>) -> tensor<3x4xf32>
  return %d : tensor<3x4xf32>
}"""),
    "convolution": ((1, 6, 6, 2), (3, 3, 2, 3), """
func.func @main(%a: tensor<1x6x6x2xf32>, %w: tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32> {
  %qa = stablehlo.uniform_quantize %a : (tensor<1x6x6x2xf32>) -> tensor<1x6x6x2x!quant.uniform<i8:f32, 0.05:-5>>
  %qw = stablehlo.uniform_quantize %w : (tensor<3x3x2x3xf32>) -> tensor<3x3x2x3x!quant.uniform<i8:f32, 0.04>>
  %c = stablehlo.convolution(%qa, %qw) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x2x!quant.uniform<i8:f32, 0.05:-5>>, tensor<3x3x2x3x!quant.uniform<i8:f32, 0.04>>) -> tensor<1x4x4x3x!quant.uniform<i32:f32, 0.002>>
  %d = stablehlo.uniform_dequantize %c : (tensor<1x4x4x3x!quant.uniform<i32:f32, 0.002>>) -> tensor<1x4x4x3xf32>
  return %d : tensor<1x4x4x3xf32>
}"""),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_interpreter(name):
    shape_a, shape_b, text = PROGRAMS[name]
    inputs = rng_inputs(*[s for s in (shape_a, shape_b) if s is not None], seed=len(name))
    exe = mlxc.compile(text)
    actual = exe(*inputs)
    (expected,) = oracle.interpret(text, inputs)
    assert actual.dtype == np.float32 and actual.shape == expected.shape
    # The interpreter lowers quantized ops with the same upstream pass: same quanta.
    np.testing.assert_array_equal(actual, expected)
    assert len(np.unique(actual)) > 3  # not all clamped to one value


def interpret_storage(text: str, inputs: list) -> np.ndarray:
    """The interpreter's single integer result of `text` (static shapes, integer
    arguments), without the shape refinement `oracle.interpret` runs first: it
    crashes on bitcast_convert to or from quantized types."""
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        (result,) = stablehlo.eval_module(
            module, [ir.DenseElementsAttr.get(a, signless=True) for a in inputs])
        return np.array(ir.DenseElementsAttr(result))


QUANTIZED_ADD = f"""
func.func @main(%a: tensor<64x{Q_A}>, %b: tensor<64x{Q_B}>) -> tensor<64x{Q_SUM}> {{
  %s = stablehlo.add %a, %b : (tensor<64x{Q_A}>, tensor<64x{Q_B}>) -> tensor<64x{Q_SUM}>
  return %s : tensor<64x{Q_SUM}>
}}"""

# The same add, storage integers in and out, for the interpreter.
STORAGE_ADD = f"""
func.func @main(%a: tensor<64xi8>, %b: tensor<64xi8>) -> tensor<64xi8> {{
  %qa = stablehlo.bitcast_convert %a : (tensor<64xi8>) -> tensor<64x{Q_A}>
  %qb = stablehlo.bitcast_convert %b : (tensor<64xi8>) -> tensor<64x{Q_B}>
  %s = stablehlo.add %qa, %qb : (tensor<64x{Q_A}>, tensor<64x{Q_B}>) -> tensor<64x{Q_SUM}>
  %r = stablehlo.bitcast_convert %s : (tensor<64x{Q_SUM}>) -> tensor<64xi8>
  return %r : tensor<64xi8>
}}"""


def test_quantized_arguments_pass_storage_integers():
    exe = mlxc.compile(QUANTIZED_ADD)
    sig = str(exe.signature)
    assert "arg0: !quant.uniform<i8:f32, 5.000000e-02:-3>[64]" in sig, sig
    m = re.search(r"-> \(result: !quant\.uniform<i8:f32, ([-+.e\d]+):-1>\[64\]\)$", sig)
    assert m and float(m.group(1)) == 0.05, sig
    assert [t.dtype for t in exe.signature.inputs + exe.signature.outputs] == [np.dtype(np.int8)] * 3
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, 64).astype(np.int8)
    b = rng.integers(-128, 128, 64).astype(np.int8)
    a_before, b_before = a.copy(), b.copy()
    out = exe(a, b)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, interpret_storage(STORAGE_ADD, [a, b]))
    total = dequantize(a, 0.05, -3).astype(np.float32) + dequantize(b, 0.025, 7).astype(np.float32)
    spec = quantize(total, 0.05, -1)
    assert np.abs(out - spec).max() <= 1
    assert np.any(out == 127) and np.any(out == -128)  # both clamps reached
    np.testing.assert_array_equal(a, a_before)
    np.testing.assert_array_equal(b, b_before)
    with pytest.raises(TypeError, match=r"argument 0 .*expected int8"):
        exe(a.astype(np.float32), b)


def test_per_axis_along_the_leading_axis():
    # quant-to-math broadcasts the scales with chlo's broadcast_dimensions = [0], which
    # upstream's chlo legalization (and so the interpreter) cannot lower; compare with
    # numpy instead.
    q = "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>"
    exe = mlxc.compile(f"""
func.func @main(%a: tensor<2x3x{q}>, %x: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x4x{q}>) {{
  %d = stablehlo.uniform_dequantize %a : (tensor<2x3x{q}>) -> tensor<2x3xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<2x4xf32>) -> tensor<2x4x{q}>
  return %d, %q : tensor<2x3xf32>, tensor<2x4x{q}>
}}""")
    a = np.array([[-128, 0, 127], [-128, 0, 127]], np.int8)
    x = np.array([[-20.0, 0.0, 0.26, 30.0], [-60.0, 0.0, 0.26, 60.0]], np.float32)
    d, qx = exe(a, x)
    expected = np.stack([dequantize(a[0], 0.1, -30), dequantize(a[1], 0.5, -20)]).astype(np.float32)
    np.testing.assert_array_equal(d, expected)
    np.testing.assert_array_equal(qx, np.stack([quantize(x[0], 0.1, -30), quantize(x[1], 0.5, -20)]))


# Unsigned storage: u8 with zero point z and range [lo, hi] holds the same numbers as
# i8 with z - 128 and [lo - 128, hi - 128], each stored value 128 lower. The interpreter
# runs the signed twin (written out by hand here); mlxc must give the same numbers.
def _unsigned_program(u: str, i: str, v: str, w: str) -> str:
    return f"""
func.func @main(%a: tensor<4x16xf32>, %b: tensor<16x3xf32>) -> (tensor<4x16xf32>, tensor<4x3xf32>) {{
  %qa = stablehlo.uniform_quantize %a : (tensor<4x16xf32>) -> tensor<4x16x{u}>
  %qa2 = stablehlo.uniform_quantize %a : (tensor<4x16xf32>) -> tensor<4x16x{v}>
  %s = stablehlo.add %qa, %qa2 : (tensor<4x16x{u}>, tensor<4x16x{v}>) -> tensor<4x16x{w}>
  %ds = stablehlo.uniform_dequantize %s : (tensor<4x16x{w}>) -> tensor<4x16xf32>
  %qb = stablehlo.uniform_quantize %b : (tensor<16x3xf32>) -> tensor<16x3x{i}>
  %p = stablehlo.dot_general %qa, %qb, contracting_dims = [1] x [0] : (tensor<4x16x{u}>, tensor<16x3x{i}>) -> tensor<4x3x!quant.uniform<i32:f32, 0.002>>
  %dp = stablehlo.uniform_dequantize %p : (tensor<4x3x!quant.uniform<i32:f32, 0.002>>) -> tensor<4x3xf32>
  return %ds, %dp : tensor<4x16xf32>, tensor<4x3xf32>
}}"""


def test_unsigned_storage_matches_its_signed_twin():
    i8 = "!quant.uniform<i8:f32, 0.04>"
    unsigned = _unsigned_program("!quant.uniform<u8:f32, 0.05:120>", i8,
                                 "!quant.uniform<u8<1:250>:f32, 0.1:200>",
                                 "!quant.uniform<u8:f32, 0.05:100>")
    twin = _unsigned_program("!quant.uniform<i8:f32, 0.05:-8>", i8,
                             "!quant.uniform<i8<-127:122>:f32, 0.1:72>",
                             "!quant.uniform<i8:f32, 0.05:-28>")
    a, b = rng_inputs((4, 16), (16, 3), seed=3)
    actual = mlxc.compile(unsigned)(a, b)
    expected = oracle.interpret(twin, [a, b])
    for x, y in zip(actual, expected):
        np.testing.assert_array_equal(x, y)
    # Against the spec's arithmetic: the sum clamps at both ends of [0, 255].
    qa = quantize(a, 0.05, 120, 0, 255)
    qa2 = quantize(a, 0.1, 200, 1, 250)
    total = dequantize(qa, 0.05, 120) + dequantize(qa2, 0.1, 200)
    spec = dequantize(quantize(total.astype(np.float32), 0.05, 100, 0, 255), 0.05, 100)
    assert np.abs(actual[0] - spec).max() <= 0.05 + 1e-6
    assert actual[0].min() == np.float32(-5.0) and actual[0].max() == np.float32(7.75)


UNSIGNED_ADD = """
func.func @main(%a: tensor<64x!quant.uniform<u8:f32, 0.05:125>>, %b: tensor<64xui8>) -> (tensor<64x!quant.uniform<u8:f32, 0.05:130>>, tensor<64xui8>) {
  %qb = stablehlo.bitcast_convert %b : (tensor<64xui8>) -> tensor<64x!quant.uniform<u8:f32, 0.025:135>>
  %s = stablehlo.add %a, %qb : (tensor<64x!quant.uniform<u8:f32, 0.05:125>>, tensor<64x!quant.uniform<u8:f32, 0.025:135>>) -> tensor<64x!quant.uniform<u8:f32, 0.05:130>>
  %r = stablehlo.bitcast_convert %s : (tensor<64x!quant.uniform<u8:f32, 0.05:130>>) -> tensor<64xui8>
  return %s, %r : tensor<64x!quant.uniform<u8:f32, 0.05:130>>, tensor<64xui8>
}"""

# The same add on signed storage, for the interpreter.
TWIN_ADD = """
func.func @main(%a: tensor<64xi8>, %b: tensor<64xi8>) -> tensor<64xi8> {
  %qa = stablehlo.bitcast_convert %a : (tensor<64xi8>) -> tensor<64x!quant.uniform<i8:f32, 0.05:-3>>
  %qb = stablehlo.bitcast_convert %b : (tensor<64xi8>) -> tensor<64x!quant.uniform<i8:f32, 0.025:7>>
  %s = stablehlo.add %qa, %qb : (tensor<64x!quant.uniform<i8:f32, 0.05:-3>>, tensor<64x!quant.uniform<i8:f32, 0.025:7>>) -> tensor<64x!quant.uniform<i8:f32, 0.05:2>>
  %r = stablehlo.bitcast_convert %s : (tensor<64x!quant.uniform<i8:f32, 0.05:2>>) -> tensor<64xi8>
  return %r : tensor<64xi8>
}"""


def test_unsigned_storage_passes_unsigned_integers():
    exe = mlxc.compile(UNSIGNED_ADD)
    assert "arg0: !quant.uniform<u8:f32, 5.000000e-02:125>[64]" in str(exe.signature)
    assert [t.dtype for t in exe.signature.inputs + exe.signature.outputs] == [np.dtype(np.uint8)] * 4
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, 64).astype(np.uint8)
    b = rng.integers(0, 256, 64).astype(np.uint8)
    a_before, b_before = a.copy(), b.copy()
    quantized, raw = exe(a, b)
    assert quantized.dtype == raw.dtype == np.uint8
    np.testing.assert_array_equal(quantized, raw)
    signed = interpret_storage(TWIN_ADD, [(a ^ 128).view(np.int8), (b ^ 128).view(np.int8)])
    np.testing.assert_array_equal(quantized, (signed.view(np.uint8) ^ 128))
    total = dequantize(a, 0.05, 125).astype(np.float32) + dequantize(b, 0.025, 135).astype(np.float32)
    assert np.abs(quantized.astype(int) - quantize(total, 0.05, 130, 0, 255)).max() <= 1
    assert np.any(quantized == 255) and np.any(quantized == 0)  # both clamps reached
    np.testing.assert_array_equal(a, a_before)
    np.testing.assert_array_equal(b, b_before)


SUITE = "/work/shared/conformance/stablehlo"


@pytest.mark.skipif(not os.path.isdir(os.path.join(SUITE, "testdata", "quantized")),
                    reason="StableHLO conformance data not present")
def test_conformance_file_with_several_modules_runs_its_main():
    # add_qi8.mlir holds interpreter tests of other types around the quantized @main.
    from mlxc.conformance import execute, suites

    cases = [c for c in suites.discover(SUITE) if c.id == "testdata/quantized/add_qi8.mlir"]
    assert len(cases) == 1 and cases[0].chunk > 0 and cases[0].out_of_scope is None
    result = execute.run_case(cases[0], SUITE)
    assert result.status == execute.PASS, result
