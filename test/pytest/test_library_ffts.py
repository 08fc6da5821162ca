"""mlxc-library-ffts: stablehlo.fft as a call to the runtime's FFT (runtime/mlxc_fft.c),
bit for bit against XLA's CPU FFT (jax), in the JIT and in a saved artifact."""

from __future__ import annotations

import time

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import export_program, run_without_compiler
from mlxc.passes import library_ffts

COMPLEX = {"f32": np.complex64, "f64": np.complex128}
REAL = {"f32": np.float32, "f64": np.float64}
LONGER = [17, 31, 61, 127, 15, 16, 32, 33, 100, 128, 1000]


def _complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _same_bits(got, expected) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    return (got.dtype == expected.dtype and got.shape == expected.shape
            and np.array_equal(got.view(np.uint8), expected.view(np.uint8)))


def _check(fn, x, x64, callee=None):
    """Compile fn's program, check the kernel call is in it (when `callee` is given)
    and the result has JAX's bits, and that the input is left as it was."""
    text, _, (expected,) = export_program(fn, x, x64=x64)
    assert "stablehlo.fft" in text
    if callee is not None:
        assert f"call @{callee}(" in str(mlxc.lower(text, stop_after="linalg"))
    saved = x.copy()
    got = mlxc.compile(text)(x)
    np.testing.assert_array_equal(x, saved)
    assert _same_bits(got, expected), \
        f"max difference {np.max(np.abs(np.asarray(got) - expected))}"


def _lengths(real: bool):
    return [n for n in list(range(1, 65)) + LONGER if library_ffts.covered(n, real)]


@pytest.mark.parametrize("prec", ["f32", "f64"])
def test_fft_ifft_every_length(prec):
    # One program per kind: every covered length is an output of it.
    x64 = prec == "f64"
    rng = np.random.default_rng(1)
    lengths = _lengths(real=False)
    assert 127 not in lengths and 1000 not in lengths  # Bluestein / split plans in ducc0
    xs = [_complex(rng, (5, n), COMPLEX[prec]) for n in lengths]  # 4 vector lanes + 1
    for fn in (jnp.fft.fft, jnp.fft.ifft):
        text, _, expected = export_program(lambda *xs: tuple(fn(x) for x in xs), *xs, x64=x64)
        assert str(mlxc.lower(text, stop_after="linalg")).count(
            "call @mlxc_fft_c64(" if prec == "f32" else "call @mlxc_fft_c128(") == len(xs)
        got = mlxc.compile(text)(*xs)
        for n, g, e in zip(lengths, got, expected):
            assert _same_bits(g, e), f"{fn.__name__} of length {n}"


@pytest.mark.parametrize("prec", ["f32", "f64"])
def test_rfft_irfft_every_length(prec):
    x64 = prec == "f64"
    rng = np.random.default_rng(2)
    lengths = _lengths(real=True)
    assert 127 in lengths and 1000 in lengths
    xs = [rng.standard_normal((5, n)).astype(REAL[prec]) for n in lengths]
    text, _, expected = export_program(lambda *xs: tuple(jnp.fft.rfft(x) for x in xs), *xs,
                                       x64=x64)
    got = mlxc.compile(text)(*xs)
    for n, g, e in zip(lengths, got, expected):
        assert _same_bits(g, e), f"rfft of length {n}"
    hs = [_complex(rng, (5, n // 2 + 1), COMPLEX[prec]) for n in lengths]
    text, _, expected = export_program(
        lambda *hs: tuple(jnp.fft.irfft(h, n=n) for h, n in zip(hs, lengths)), *hs, x64=x64)
    lowered = str(mlxc.lower(text, stop_after="linalg"))
    assert lowered.count(f"call @mlxc_irfft_{prec}(") == len(hs)
    got = mlxc.compile(text)(*hs)
    for n, g, e in zip(lengths, got, expected):
        assert _same_bits(g, e), f"irfft of length {n}"


MULTI = [[4, 6], [16, 15], [8, 9, 10], [3, 5, 7], [12, 17], [1, 8], [64, 64]]


@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("lengths", MULTI, ids=lambda s: "x".join(map(str, s)))
def test_several_axes(prec, lengths):
    x64 = prec == "f64"
    rng = np.random.default_rng(len(lengths))
    axes = tuple(range(1, len(lengths) + 1))
    x = _complex(rng, [2] + lengths, COMPLEX[prec])
    r = rng.standard_normal([2] + lengths).astype(REAL[prec])
    h = _complex(rng, [2] + lengths[:-1] + [lengths[-1] // 2 + 1], COMPLEX[prec])
    c2c = "mlxc_fft_c64" if prec == "f32" else "mlxc_fft_c128"
    _check(lambda x: jnp.fft.fftn(x, axes=axes), x, x64, c2c)
    _check(lambda x: jnp.fft.ifftn(x, axes=axes), x, x64, c2c)
    _check(lambda r: jnp.fft.rfftn(r, axes=axes), r, x64, f"mlxc_rfft_{prec}")
    _check(lambda h: jnp.fft.irfftn(h, s=lengths, axes=axes), h, x64, f"mlxc_irfft_{prec}")


@pytest.mark.parametrize("shape", [(3, 6, 1), (2, 1, 6, 1), (2, 5, 1, 1), (2, 3, 1, 4),
                                   (2, 4, 3, 1)])
def test_unit_dims_follow_xla_axis_order(shape):
    # ducc0 runs the first axis swapped with the first later one of unit stride (not the
    # innermost when trailing dims are 1), and that axis takes an inverse's 1/N: the
    # bits show the order. IRFFT's leading axes follow the same rule.
    rng = np.random.default_rng(len(shape))
    axes = tuple(range(len(shape) - 3, len(shape)))
    s = tuple(shape[a] for a in axes)
    x = _complex(rng, shape, np.complex64)
    half = np.ascontiguousarray(x[..., : shape[-1] // 2 + 1])
    _check(lambda x: jnp.fft.fftn(x, axes=axes), x, False, "mlxc_fft_c64")
    _check(lambda x: jnp.fft.ifftn(x, axes=axes), x, False, "mlxc_fft_c64")
    _check(lambda h: jnp.fft.irfftn(h, s=s, axes=axes), half, False, "mlxc_irfft_f32")
    _check(lambda r: jnp.fft.rfftn(r, axes=axes), x.real.copy(), False, "mlxc_rfft_f32")


@pytest.mark.parametrize("fft_type", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_lax_fft_with_batches(fft_type):
    # lax.fft directly, over two batch dimensions (one of them empty in the second case).
    rng = np.random.default_rng(3)
    lengths = (6, 10)
    for batch in [(3, 2), (0, 2)]:
        if fft_type == "RFFT":
            x = rng.standard_normal(batch + lengths).astype(np.float32)
        elif fft_type == "IRFFT":
            x = _complex(rng, batch + (6, 6), np.complex64)
        else:
            x = _complex(rng, batch + lengths, np.complex64)
        _check(lambda x: lax.fft(x, fft_type, lengths), x, False,
               {"FFT": "mlxc_fft_c64", "IFFT": "mlxc_fft_c64", "RFFT": "mlxc_rfft_f32",
                "IRFFT": "mlxc_irfft_f32"}[fft_type] if batch[0] else None)


def test_uncovered_lengths_keep_the_generated_transform():
    # Complex 127 is a Bluestein pass in ducc0 and 1000 an interleaved plan: not the
    # kernel's; the lowering in lowerings/fft.py handles them (no call).
    rng = np.random.default_rng(4)
    for n in (127, 1000):
        x = _complex(rng, (2, n), np.complex64)
        text, _, (expected,) = export_program(jnp.fft.fft, x)
        assert "call @mlxc_fft" not in str(mlxc.lower(text, stop_after="linalg"))
        got = mlxc.compile(text)(x)
        np.testing.assert_allclose(got, expected, rtol=0, atol=2e-5 * np.abs(expected).max())


def test_compile_time_is_small(capsys):
    # Printed, not asserted (the machine is shared): the call compiles like any small
    # program, where the unrolled FFT [64] took seconds.
    rng = np.random.default_rng(5)
    x = _complex(rng, (16, 64), np.complex64)
    text, _, (expected,) = export_program(jnp.fft.fft, x)
    with mlxc.settings.override(cache=False):
        start = time.perf_counter()
        exe = mlxc.compile(text)
        seconds = time.perf_counter() - start
    assert _same_bits(exe(x), expected)
    with capsys.disabled():
        print(f"\nFFT [64] of 16 rows: compiled in {seconds:.3f} s")


def test_saved_artifact_runs_the_kernel(tmp_path):
    # exe.save() compiles the runtime's sources into the artifact: the FFT goes with it,
    # and runs in a process that has no compiler (as test_aot.py loads artifacts).
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 30, 48)).astype(np.float32)
    text, _, (expected,) = export_program(lambda x: jnp.fft.rfft2(x), x)
    assert "call @mlxc_rfft_f32(" in str(mlxc.lower(text, stop_after="linalg"))
    path = tmp_path / "rfft2.so"
    mlxc.compile(text).save(path)
    assert _same_bits(mlxc.load(path)(x), expected)
    (out,) = run_without_compiler(path, [x], tmp_path)
    assert _same_bits(out, expected)
