"""complex64 and complex128 programs, exported from JAX, against JAX's own results."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from helpers import assert_matches, export_program

DTYPES = {"c64": (np.complex64, False, 2e-6), "c128": (np.complex128, True, 1e-13)}


def _complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


PROGRAMS = {
    "arithmetic": (lambda a, b: (a + b, a - b, a * b, a / b, -a), 2),
    "abs_conj_real_imag": (lambda a: (jnp.abs(a), jnp.conj(a), jnp.real(a), jnp.imag(a)), 1),
    "from_parts": (lambda a: jax.lax.complex(jnp.real(a) * 2, jnp.imag(a) - 1), 1),
    "exp_log_sqrt": (lambda a: (jnp.exp(a), jnp.log(a), jnp.sqrt(a)), 1),
    "trig": (lambda a: (jnp.sin(a), jnp.cos(a), jnp.tanh(a)), 1),
    "pow_rsqrt": (lambda a, b: (a ** b, jax.lax.rsqrt(a), a ** 3), 2),
    "matmul": (lambda a, b: (a @ b.T, jnp.einsum("ij,kj->ik", a, jnp.conj(b))), 2),
    "reductions": (lambda a: (jnp.sum(a, axis=0), jnp.prod(a[:, :3], axis=1), jnp.mean(a)), 1),
    "compare_select": (lambda a, b: (jnp.where(a == b, a, b * 2), a != b), 2),
    "to_and_from_real": (lambda a: (a.astype(jnp.float32) + 0, jnp.real(a).astype(a.dtype) * a), 1),
}


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_matches_jax(name, dtype_name):
    dtype, x64, rtol = DTYPES[dtype_name]
    fn, arity = PROGRAMS[name]
    rng = np.random.default_rng(7)
    args = [_complex(rng, (5, 6), dtype) for _ in range(arity)]
    with jax.enable_x64(x64):
        text, artifact, expected = export_program(fn, *args, x64=x64)
    exe = mlxc.compile(text)
    assert exe.signature.inputs[0].dtype == np.dtype(dtype)
    snapshot = [a.copy() for a in args]
    assert_matches(exe(*args), expected, rtol)
    for before, after in zip(snapshot, args):
        np.testing.assert_array_equal(before, after)


def test_layout_matches_numpy():
    # One element written per part: a swapped (imaginary, real) layout would show.
    exe = mlxc.compile("""
    func.func @main(%re: tensor<3xf64>, %im: tensor<3xf64>) -> (tensor<3xcomplex<f64>>, tensor<3xf64>) {
      %0 = stablehlo.complex %re, %im : tensor<3xcomplex<f64>>
      %1 = stablehlo.imag %0 : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
      return %0, %1 : tensor<3xcomplex<f64>>, tensor<3xf64>
    }""")
    z, im = exe(np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 4.0]))
    assert z.dtype == np.complex128
    np.testing.assert_array_equal(z, [1 - 1j, 2 + 0.5j, 3 + 4j])
    np.testing.assert_array_equal(im, [-1.0, 0.5, 4.0])


def test_non_contiguous_complex_input():
    exe = mlxc.compile("""
    func.func @main(%a: tensor<4x3xcomplex<f32>>) -> tensor<4x3xcomplex<f32>> {
      %0 = stablehlo.multiply %a, %a : tensor<4x3xcomplex<f32>>
      return %0 : tensor<4x3xcomplex<f32>>
    }""")
    base = _complex(np.random.default_rng(1), (3, 8), np.complex64)
    a = base.T[::2]  # strided and transposed
    np.testing.assert_allclose(exe(a), a * a, rtol=1e-6)


@pytest.mark.parametrize("src,dst", [("complex<f64>", "complex<f32>"),
                                     ("complex<f32>", "complex<f64>"),
                                     ("complex<f32>", "complex<f32>")])
def test_bitcast_convert(src, dst):
    # Bitcasts reinterpret the bytes numpy holds: compare with numpy's view.
    numpy = {"complex<f64>": np.complex128, "complex<f32>": np.complex64}
    src_np, dst_np = np.dtype(numpy[src]), np.dtype(numpy[dst])
    shape = [3, 2] if src_np.itemsize >= dst_np.itemsize else [3, dst_np.itemsize // src_np.itemsize]
    out_shape = ([3, 2] + ([src_np.itemsize // dst_np.itemsize] if src_np.itemsize > dst_np.itemsize
                           else [])) if src_np.itemsize >= dst_np.itemsize else [3]
    t = lambda s, e: "tensor<" + "".join(f"{d}x" for d in s) + e + ">"
    exe = mlxc.compile(f"""
    func.func @main(%a: {t(shape, src)}) -> {t(out_shape, dst)} {{
      %0 = stablehlo.bitcast_convert %a : ({t(shape, src)}) -> {t(out_shape, dst)}
      return %0 : {t(out_shape, dst)}
    }}""")
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape + [2]).astype(src_np.type(0).real.dtype).view(src_np)
    a = a.reshape(shape)
    out = exe(a)
    np.testing.assert_array_equal(out.view(np.uint8).reshape(-1), a.view(np.uint8).reshape(-1))
    assert out.dtype == dst_np and list(out.shape) == out_shape


def test_maximum_minimum_are_lexicographic():
    exe = mlxc.compile("""
    func.func @main(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) {
      %0 = stablehlo.maximum %a, %b : tensor<4xcomplex<f32>>
      %1 = stablehlo.minimum %a, %b : tensor<4xcomplex<f32>>
      return %0, %1 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>
    }""")
    a = np.array([1.5 + 2.5j, 1.5 + 7.5j, 0 + 1.5j, 3 - 1j], np.complex64)
    b = np.array([7.5 + 1.5j, 1.5 + 2.5j, 0 + 2.5j, 2 + 9j], np.complex64)
    mx, mn = exe(a, b)
    # numpy orders complex numbers the same way (real part first).
    np.testing.assert_array_equal(mx, np.maximum(a, b))
    np.testing.assert_array_equal(mn, np.minimum(a, b))


def test_cbrt_is_the_principal_root():
    exe = mlxc.compile("""
    func.func @main(%z: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
      %0 = stablehlo.cbrt %z : tensor<4xcomplex<f64>>
      return %0 : tensor<4xcomplex<f64>>
    }""")
    z = np.array([3 + 4j, -8 + 0j, 1j, 0j])
    expected = np.abs(z) ** (1 / 3) * np.exp(1j * np.angle(z) / 3)
    np.testing.assert_allclose(exe(z), expected, rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_products_round_as_jax_does(dtype_name):
    # XLA's CPU backend fuses the complex product's multiply-adds; we do the same, so
    # products (and long chains of them) agree with JAX to the last bit.
    dtype, x64, _ = DTYPES[dtype_name]
    rng = np.random.default_rng(11)
    a, b = _complex(rng, (400,), dtype) * 30, _complex(rng, (400,), dtype) * 30
    c = _complex(rng, (8, 9), dtype)
    text, _, (product,) = export_program(lambda x, y: x * y, a, b, x64=x64)
    np.testing.assert_array_equal(mlxc.compile(text)(a, b), product)
    text, _, (cumprod,) = export_program(lambda x: jnp.cumprod(x, axis=0), c, x64=x64)
    np.testing.assert_array_equal(mlxc.compile(text)(c), cumprod)


def test_log1p_is_accurate_where_one_plus_z_is_near_the_unit_circle():
    exe = mlxc.compile("""
    func.func @main(%z: tensor<6xcomplex<f32>>) -> tensor<6xcomplex<f32>> {
      %0 = stablehlo.log_plus_one %z : tensor<6xcomplex<f32>>
      return %0 : tensor<6xcomplex<f32>>
    }""")
    z = np.array([-1.943189 - 0.40870938j, 1e-8 + 1e-8j, -0.3 + 0.7j, 3 - 4j,
                  1e30 + 1e30j, -1e25 + 0j], np.complex64)
    exact = np.log(1 + z.astype(np.complex128))  # 1 + z is exact in f64 for these
    out = exe(z)
    # A few ulps; where x (x + 2) and y^2 cancel (-0.3 + 0.7i) a few ulps of 1.
    well_conditioned = np.arange(6) != 2
    np.testing.assert_allclose(out.real[well_conditioned], exact.real[well_conditioned], rtol=2e-7)
    np.testing.assert_allclose(out.real[2], exact.real[2], atol=1e-7)
    np.testing.assert_allclose(out.imag, exact.imag, rtol=2e-7)


def _expm1_inputs(dtype):
    rng = np.random.default_rng(13)
    re = np.concatenate([rng.uniform(-3, 3, 600), rng.uniform(-1e-3, 1e-3, 200), [8.482779, 0.0]])
    im = np.concatenate([rng.uniform(-3, 3, 600), rng.uniform(-1e-3, 1e-3, 200), [-0.0200922, 0.0]])
    return (re + 1j * im).astype(dtype)


def test_expm1_complex64_is_xlas_bit_for_bit():
    # XLA's formula, expm1(x) cos y + cosm1(y) + i exp(x) sin y, with its fused
    # multiply-adds; upstream's rounding put 8.48 - 0.02i one f32 step off (4828.8794).
    z = _expm1_inputs(np.complex64)
    text, _, (expected,) = export_program(jnp.expm1, z)
    np.testing.assert_array_equal(mlxc.compile(text)(z), expected)


def test_expm1_complex128_is_accurate_near_zero():
    # The real part cancels where expm1(x) cos y ~ -cosm1(y); the product is kept exact.
    # Measured against the cancellation-free formula below in x87 long double (11 more
    # bits): no larger an error than XLA's, at most or on average. (Bit equality with
    # XLA is not the aim: XLA's f64 tanh, inside expm1, is up to 6 ulp off.)
    z = _expm1_inputs(np.complex128)
    text, _, (xla,) = export_program(jnp.expm1, z, x64=True)
    actual = mlxc.compile(text)(z)
    x, y = z.real.astype(np.longdouble), z.imag.astype(np.longdouble)
    truth = (np.expm1(x) * np.cos(y) - 2 * np.sin(y / 2) ** 2, np.exp(x) * np.sin(y))
    for part, ours, theirs, exact in zip(("real", "imag"), (actual.real, actual.imag),
                                         (xla.real, xla.imag), truth):
        step = np.spacing(np.abs(exact.astype(np.float64)))
        ours_ulp = np.abs(ours.astype(np.longdouble) - exact) / step
        xla_ulp = np.abs(theirs.astype(np.longdouble) - exact) / step
        assert ours_ulp.max() <= xla_ulp.max() and ours_ulp.mean() <= xla_ulp.mean(), part
    # Near 0, exp(z) - 1 would lose the real part to cancellation (relative 1e-5 here);
    # reference: expm1(x) cos y - 2 sin^2(y/2) + i exp(x) sin y, free of cancellation.
    tiny = np.array([1e-9 + 1e-9j, -1e-12 + 2e-6j, 3e-7 - 1e-4j], np.complex128)
    x, y = tiny.real, tiny.imag
    exact = np.expm1(x) * np.cos(y) - 2 * np.sin(y / 2) ** 2 + 1j * np.exp(x) * np.sin(y)
    text, _, _ = export_program(jnp.expm1, tiny, x64=True)
    np.testing.assert_allclose(mlxc.compile(text)(tiny), exact, rtol=1e-14)
