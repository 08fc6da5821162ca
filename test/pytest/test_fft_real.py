"""mlxc.lowerings.fft_real (ducc0's real FFT as lane programs) evaluated on numpy
lanes, against XLA's CPU FFT through jax: the bytes must be identical."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mlxc.lowerings import fft_real

BATCH = 32
# Every length up to 64, and longer ones whose plans combine passes differently: the
# generic pass with l1 > 1 and ido > 1 (98, 147), a prime just under ducc0's
# Bluestein bound (131), long even lengths just under and over 1000 (1000, 1024).
LENGTHS = list(range(1, 65)) + [98, 128, 131, 147, 243, 1000, 1001, 1024]
DTYPES = [np.float32, np.float64]


def _complex_dtype(dtype):
    return np.complex64 if dtype == np.float32 else np.complex128


def _assert_same_bits(got, expected):
    got, expected = np.ascontiguousarray(got), np.ascontiguousarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if not np.array_equal(got.view(np.uint8), expected.view(np.uint8)):
        real = got.real.dtype
        diff = np.flatnonzero(got.view(real) != expected.view(real))
        raise AssertionError(f"{diff.size} of {got.view(real).size} values differ, first at "
                             f"{diff[0]}: {got.view(real).flat[diff[0]]!r} != "
                             f"{expected.view(real).flat[diff[0]]!r}")


def _pairs_to_array(pairs, dtype, batch=BATCH):
    cols = [np.broadcast_to(re, (batch,)) + 1j * np.broadcast_to(im, (batch,))
            for re, im in pairs]
    return np.stack(cols, axis=1).astype(_complex_dtype(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", LENGTHS)
def test_r2c_matches_xla(n, dtype):
    x = np.random.default_rng(n).standard_normal((BATCH, n)).astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        expected = np.asarray(jax.jit(jnp.fft.rfft)(x))
    got = fft_real.r2c([x[:, j] for j in range(n)], n, dtype, 1)
    _assert_same_bits(_pairs_to_array(got, dtype), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", LENGTHS)
def test_c2r_matches_xla(n, dtype):
    rng = np.random.default_rng(1000 + n)
    m = n // 2 + 1
    # Random imaginary parts in X[0] and X[n/2] too: XLA ignores them, so must we.
    spectrum = (rng.standard_normal((BATCH, m))
                + 1j * rng.standard_normal((BATCH, m))).astype(_complex_dtype(dtype))
    with jax.enable_x64(dtype == np.float64):
        expected = np.asarray(jax.jit(lambda s: jnp.fft.irfft(s, n))(spectrum))
    pairs = [(spectrum[:, k].real.copy(), spectrum[:, k].imag.copy()) for k in range(m)]
    got = fft_real.c2r(pairs, n, dtype, dtype(1.0 / n))
    _assert_same_bits(np.stack(got, axis=1), expected)


@pytest.mark.parametrize("n", [1, 2, 7, 16, 17])
def test_r2c_stores_exact_zero_imaginary_parts(n):
    x = np.random.default_rng(n).standard_normal((BATCH, n)).astype(np.float32)
    out = fft_real.r2c([x[:, j] for j in range(n)], n, np.float32, 1)
    zero_bins = [0] + ([n // 2] if n % 2 == 0 else [])
    for k in zero_bins:
        im = out[k][1]
        assert isinstance(im, np.float32) and im == 0 and not np.signbit(im)


def test_no_factor_means_no_multiplication():
    x = np.random.default_rng(3).standard_normal((BATCH, 12))
    lanes = [x[:, j] for j in range(12)]
    for (a, b), (c, d) in zip(fft_real.r2c(lanes, 12, np.float64),
                              fft_real.r2c(lanes, 12, np.float64, 1)):
        _assert_same_bits(a, c)
        _assert_same_bits(np.asarray(b), np.asarray(d))
    pairs = fft_real.r2c(lanes, 12, np.float64)
    for a, b in zip(fft_real.c2r(pairs, 12, np.float64), fft_real.c2r(pairs, 12, np.float64, 2.0)):
        _assert_same_bits(2.0 * a, b)


@pytest.mark.parametrize("n", [1, 16, 17])
def test_c2r_never_reads_imaginary_parts_of_real_bins(n):
    rng = np.random.default_rng(n)
    pairs = [(rng.standard_normal(BATCH), rng.standard_normal(BATCH)) for _ in range(n // 2 + 1)]
    blanked = list(pairs)
    blanked[0] = (pairs[0][0], None)
    if n % 2 == 0:
        blanked[n // 2] = (pairs[n // 2][0], None)
    for a, b in zip(fft_real.c2r(pairs, n, np.float64, 1.0 / n),
                    fft_real.c2r(blanked, n, np.float64, 1.0 / n)):
        _assert_same_bits(a, b)


def test_callers_lanes_are_not_modified():
    n = 49  # the generic pass works in place on its input
    x = np.random.default_rng(0).standard_normal((BATCH, n))
    lanes = [x[:, j].copy() for j in range(n)]
    before = [v.copy() for v in lanes]
    ids = [id(v) for v in lanes]
    pairs = fft_real.r2c(lanes, n, np.float64, 1)
    fft_real.c2r(pairs, n, np.float64, 1.0 / n)
    assert [id(v) for v in lanes] == ids
    for a, b in zip(lanes, before):
        _assert_same_bits(a, b)


@pytest.mark.parametrize("n, factors", [(8, [2, 4]), (24, [2, 4, 3]), (32, [2, 4, 4]),
                                        (45, [3, 3, 5]), (98, [2, 7, 7])])
def test_factor_order_is_ducc0s(n, factors):
    assert fft_real.factorize(n) == factors


@pytest.mark.parametrize("n", [137, 2 * 137, 1002, 2002, 12000])
def test_lengths_with_other_plans_are_refused(n):
    assert not fft_real.uses_radix_passes(n)
    with pytest.raises(ValueError, match=f"length {n} with a Bluestein or complex plan"):
        fft_real.r2c([np.zeros(1)] * n, n, np.float64, 1)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="3 lanes for a length-4 transform"):
        fft_real.r2c([np.zeros(1)] * 3, 4, np.float32, 1)
    with pytest.raises(ValueError, match=r"2 pairs for a length-4 transform \(expected 3\)"):
        fft_real.c2r([(np.zeros(1), np.zeros(1))] * 2, 4, np.float32, 1)
    with pytest.raises(ValueError, match="element type float16"):
        fft_real.r2c([np.zeros(1, np.float16)] * 4, 4, np.float16, 1)


def _c2c_along(x, axis, dtype, forward):
    """fft_complex.c2c (unnormalized) along one axis of a complex numpy array."""
    from mlxc.lowerings import fft_complex
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    lanes = [(flat[:, k].real.copy(), flat[:, k].imag.copy()) for k in range(flat.shape[1])]
    out = fft_complex.c2c(lanes, flat.shape[1], dtype, forward)
    out = np.stack([re + 1j * im for re, im in out], axis=1).astype(x.dtype)
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_several_axes_compose_as_xla(dtype):
    # XLA's RFFT over axes (1, 2, 3): r2c along 3, then c2c along 1 and after it 2 (the
    # outer axis first, unlike a complex FFT over several axes). IRFFT: backward c2c
    # along 1 then 2 unnormalized, then c2r along 3 with fct = 1/(15*16*n) (formed in
    # double, rounded once). Reversing either order changes most results.
    cdt = _complex_dtype(dtype)
    rng = np.random.default_rng(7)
    n = 17  # RFFT [17], as in the conformance cases
    x = rng.standard_normal((2, 15, 16, n)).astype(dtype)
    flat = x.reshape(-1, n)
    half = _pairs_to_array(fft_real.r2c([flat[:, j] for j in range(n)], n, dtype, 1),
                           dtype, flat.shape[0])
    got = half.reshape(2, 15, 16, n // 2 + 1)
    for axis in (1, 2):
        got = _c2c_along(got, axis, dtype, True)
    with jax.enable_x64(dtype == np.float64):
        expected = np.asarray(jax.jit(lambda v: jnp.fft.rfftn(v, axes=(1, 2, 3)))(x))
    _assert_same_bits(got, expected)

    n = 32 if dtype == np.float32 else 33  # IRFFT [15, 16, 32] and [33] there
    spectrum = (rng.standard_normal((2, 15, 16, n // 2 + 1))
                + 1j * rng.standard_normal((2, 15, 16, n // 2 + 1))).astype(cdt)
    mid = spectrum
    for axis in (1, 2):
        mid = _c2c_along(mid, axis, dtype, False)
    flat = mid.reshape(-1, n // 2 + 1)
    out = fft_real.c2r([(flat[:, k].real.copy(), flat[:, k].imag.copy())
                        for k in range(n // 2 + 1)], n, dtype, dtype(1.0 / (15 * 16 * n)))
    with jax.enable_x64(dtype == np.float64):
        expected = np.asarray(jax.jit(
            lambda s: jnp.fft.irfftn(s, s=(15, 16, n), axes=(1, 2, 3)))(spectrum))
    _assert_same_bits(np.stack(out, axis=1).reshape(expected.shape), expected)
