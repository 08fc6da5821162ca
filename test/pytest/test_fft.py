"""stablehlo.fft (mlxc.lowerings.fft) against JAX's jnp.fft and numpy's pocketfft."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from helpers import assert_matches, export_program


def _complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


PROGRAMS = {
    "fft": (lambda x: jnp.fft.fft(x), "c"),
    "ifft": (lambda x: jnp.fft.ifft(x), "c"),
    "fft2": (lambda x: jnp.fft.fft2(x), "c"),
    "ifftn": (lambda x: jnp.fft.ifftn(x, axes=(0, 1, 2)), "c"),
    "rfft": (lambda x: jnp.fft.rfft(x), "r"),
    "rfft2": (lambda x: jnp.fft.rfft2(x), "r"),
    "irfft": (lambda x: jnp.fft.irfft(x), "c"),
    "irfft_odd": (lambda x: jnp.fft.irfft(x, n=9), "c"),
    "irfft2": (lambda x: jnp.fft.irfft2(x, s=(6, 10)), "c"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("x64", [False, True])
def test_matches_jax(name, x64):
    fn, kind = PROGRAMS[name]
    rng = np.random.default_rng(0)
    shape = (3, 6, 5) if name != "irfft2" else (3, 6, 6)
    if kind == "c":
        x = _complex(rng, shape, np.complex128 if x64 else np.complex64)
    else:
        x = rng.standard_normal(shape).astype(np.float64 if x64 else np.float32)
    text, _, expected = export_program(fn, x, x64=x64)
    assert "stablehlo.fft" in text
    saved = x.copy()
    got = mlxc.compile(text)(x)
    np.testing.assert_array_equal(x, saved)
    # Short lengths run XLA's own FFT algorithm: the same bits, not just close.
    _assert_same_bits(got, expected)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 97])
def test_lengths_against_pocketfft(n):
    # Prime, power-of-two and trivial lengths. 64 and 97 are over the exact path's
    # budget: the f64 transform rounded once, so they agree with numpy's f64 pocketfft
    # to f32 rounding; 1, 2 and 7 are XLA's f32 arithmetic, within the same bound.
    rng = np.random.default_rng(n)
    x = _complex(rng, (4, n), np.complex64)
    text, _, _ = export_program(lambda x: jnp.fft.fft(x), x)
    got = mlxc.compile(text)(x)
    expected = np.fft.fft(x.astype(np.complex128)).astype(np.complex64)
    np.testing.assert_allclose(got, expected, rtol=0, atol=4e-7 * np.abs(expected).max())


def test_round_trip_and_parseval():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 32)).astype(np.float64)

    def f(x):
        spectrum = jnp.fft.rfft(x)
        return jnp.fft.irfft(spectrum, n=32), jnp.sum(jnp.abs(jnp.fft.fft(x)) ** 2, axis=-1)

    text, _, _ = export_program(f, x, x64=True)
    back, energy = mlxc.compile(text)(x)
    np.testing.assert_allclose(back, x, rtol=0, atol=1e-13)
    np.testing.assert_allclose(energy, 32 * np.sum(x * x, axis=-1), rtol=1e-13)


def test_stablehlo_text_with_zero_size_batch():
    # A zero-size batch dimension: the result is empty, of the right type and shape.
    text = """func.func @main(%x: tensor<0x3x8xf32>) -> tensor<0x3x5xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [8] : (tensor<0x3x8xf32>) -> tensor<0x3x5xcomplex<f32>>
  return %0 : tensor<0x3x5xcomplex<f32>>
}"""
    got = mlxc.compile(text)(np.zeros((0, 3, 8), np.float32))
    assert got.shape == (0, 3, 5) and got.dtype == np.complex64


@pytest.mark.parametrize("name,fn,n,real", [
    ("fft", lambda x: jnp.fft.fft(x), 4096, False),
    ("ifft", lambda x: jnp.fft.ifft(x), 1000, False),
    ("rfft", lambda x: jnp.fft.rfft(x), 3000, True),
    ("irfft", lambda x: jnp.fft.irfft(x, n=2048), 1025, False),
    ("irfft_odd", lambda x: jnp.fft.irfft(x, n=1001), 501, False),
    ("prime", lambda x: jnp.fft.fft(x), 257, False),
])
def test_long_transforms_split(name, fn, n, real):
    # Long composite lengths go through the Cooley-Tukey split (recursively for 4096).
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, n)) + (0 if real else 1j * rng.standard_normal((3, n)))
    x = x.astype(np.float32 if real else np.complex64)
    text, _, expected = export_program(fn, x)
    assert_matches(mlxc.compile(text)(x), expected, rtol=2e-6)


def test_long_transform_in_f64_against_pocketfft():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 6, 720)) + 1j * rng.standard_normal((2, 6, 720))
    text, _, _ = export_program(lambda x: jnp.fft.fftn(x, axes=(1, 2)), x, x64=True)
    got = mlxc.compile(text)(x)
    expected = np.fft.fftn(x, axes=(1, 2))
    assert np.abs(got - expected).max() <= 1e-13 * np.abs(expected).max()


@pytest.mark.parametrize("n,inverse", [(521, False), (1031, True), (2 * 1031, False)])
def test_long_prime_lengths_use_bluestein(n, inverse):
    # A prime factor above 512 becomes a power-of-two convolution, not an n^2 matrix.
    t = f"tensor<2x{n}xcomplex<f64>>"
    text = f"""func.func @main(%x: {t}) -> {t} {{
  %0 = stablehlo.fft %x, type = {'IFFT' if inverse else 'FFT'}, length = [{n}] : ({t}) -> {t}
  return %0 : {t}
}}"""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))
    got = mlxc.compile(text)(x)
    expected = (np.fft.ifft if inverse else np.fft.fft)(x)
    assert np.abs(got - expected).max() <= 1e-13 * np.abs(expected).max()


def _unrolled(text: str):
    """The program compiled through this lowering's exact path: with library calls, the
    CPU pipeline hands FFTs to the runtime's kernel first (test_library_ffts)."""
    with mlxc.settings.override(library_calls=False):
        return mlxc.compile(text)


def _same_bits(a, b) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
        a.view(np.uint8), b.view(np.uint8))


def _assert_same_bits(got, expected):
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected):
        if not _same_bits(g, e):
            diff = np.abs(g.astype(np.complex128) - e.astype(np.complex128))
            raise AssertionError(f"{np.count_nonzero(diff)} of {e.size} entries differ from "
                                 f"XLA's, by up to {diff.max():.3e}")


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 11, 13, 15, 16, 17, 24, 27, 32, 33, 40])
@pytest.mark.parametrize("x64", [False, True])
def test_complex_lengths_bit_identical_to_xla(n, x64):
    # Every radix of ducc0's plan (2, 3, 4, 5, 7, 8, 11, the generic odd pass) and
    # their products; the inverse carries XLA's 1/n rounded to the element type.
    rng = np.random.default_rng(n)
    x = _complex(rng, (3, n), np.complex128 if x64 else np.complex64)
    text, _, expected = export_program(lambda x: (jnp.fft.fft(x), jnp.fft.ifft(x)), x, x64=x64)
    _assert_same_bits(_unrolled(text)(x), expected)


@pytest.mark.parametrize("axes,shape", [((1, 2), (2, 6, 5)), ((0, 1, 2), (4, 9, 8)),
                                        ((1, 2, 3), (2, 15, 16, 7))])
@pytest.mark.parametrize("x64", [False, True])
def test_complex_multi_axis_bit_identical_to_xla(axes, shape, x64):
    # XLA transforms the innermost axis first, and an inverse scales there.
    rng = np.random.default_rng(len(shape))
    x = _complex(rng, shape, np.complex128 if x64 else np.complex64)
    text, _, expected = export_program(
        lambda x: (jnp.fft.fftn(x, axes=axes), jnp.fft.ifftn(x, axes=axes)), x, x64=x64)
    saved = x.copy()
    _assert_same_bits(_unrolled(text)(x), expected)
    np.testing.assert_array_equal(x, saved)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12, 15, 16, 17, 32, 33, 49, 64, 72, 80])
@pytest.mark.parametrize("x64", [False, True])
def test_real_lengths_bit_identical_to_xla(n, x64):
    # RFFT of length n and IRFFT back to length n (an odd n drops no entry, an even
    # one ignores the imaginary parts of X[0] and X[n/2], as XLA does).
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, 3, n)).astype(np.float64 if x64 else np.float32)
    spectrum = _complex(rng, (2, 3, n // 2 + 1), np.complex128 if x64 else np.complex64)
    text, _, expected = export_program(
        lambda x, s: (jnp.fft.rfft(x), jnp.fft.irfft(s, n=n)), x, spectrum, x64=x64)
    _assert_same_bits(_unrolled(text)(x, spectrum), expected)


@pytest.mark.parametrize("lengths", [(6, 5), (4, 9, 8), (15, 16, 32)])
@pytest.mark.parametrize("x64", [False, True])
def test_real_multi_axis_bit_identical_to_xla(lengths, x64):
    # RFFT: the real (last) axis, then the others outermost first; IRFFT: the leading
    # axes outermost first, then the real axis with the whole 1/N.
    rng = np.random.default_rng(len(lengths))
    axes = tuple(range(1, len(lengths) + 1))
    x = rng.standard_normal((2, *lengths)).astype(np.float64 if x64 else np.float32)
    spectrum = _complex(rng, (2, *lengths[:-1], lengths[-1] // 2 + 1),
                        np.complex128 if x64 else np.complex64)
    text, _, expected = export_program(
        lambda x, s: (jnp.fft.rfftn(x, axes=axes), jnp.fft.irfftn(s, s=lengths, axes=axes)),
        x, spectrum, x64=x64)
    saved = spectrum.copy()
    _assert_same_bits(_unrolled(text)(x, spectrum), expected)
    np.testing.assert_array_equal(spectrum, saved)


@pytest.mark.parametrize("x64", [False, True])
def test_batch_padded_to_rows_bit_identical_to_xla(x64):
    # A batch of 5 x 7 = 35 transforms runs as 3 rows of 16 (13 of them padding).
    rng = np.random.default_rng(35)
    x = rng.standard_normal((5, 7, 12)).astype(np.float64 if x64 else np.float32)
    z = _complex(rng, (5, 12, 7), np.complex128 if x64 else np.complex64)
    text, _, expected = export_program(
        lambda x, z: (jnp.fft.rfft(x), jnp.fft.ifft(z, axis=1)), x, z, x64=x64)
    _assert_same_bits(_unrolled(text)(x, z), expected)


@pytest.mark.parametrize("shape", [(3, 6, 1), (2, 1, 6, 1), (2, 5, 1, 1), (2, 3, 1, 4)])
def test_unit_dims_follow_xla_axis_order(shape):
    # XLA's library swaps the first axis with the first later one of unit stride, and
    # the first axis run takes an inverse's 1/N: with trailing dims of 1 that is not
    # the innermost axis, and the bits show it.
    rng = np.random.default_rng(len(shape))
    axes = tuple(range(len(shape) - 3, len(shape)))
    s = tuple(shape[a] for a in axes)
    x = _complex(rng, shape, np.complex64)
    half = np.ascontiguousarray(x[..., : shape[-1] // 2 + 1])
    text, _, expected = export_program(
        lambda x, h: (jnp.fft.fftn(x, axes=axes), jnp.fft.ifftn(x, axes=axes),
                      jnp.fft.irfftn(h, s=s, axes=axes)), x, half)
    _assert_same_bits(_unrolled(text)(x, half), expected)
