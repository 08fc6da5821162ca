"""Functions that must stay accurate near zero, where textbook formulas cancel.

expm1/log1p (StableHLO ops) and asinh/atanh/sinh (CHLO ops in `jax.jit` text) are
checked in units in the last place against numpy's float64 results rounded to f32.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from helpers import export_program

# Tiny, small, moderate and large magnitudes of both signs, plus the special values.
X = np.concatenate([s * np.array([1e-30, 1e-8, 3e-5, 0.011, 0.3, 0.99, 1.7, 25.0, 1e4], np.float32)
                    for s in (1, -1)]).astype(np.float32)
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)


def ulps(actual: np.ndarray, truth: np.ndarray) -> np.ndarray:
    expected = truth.astype(np.float32)
    spacing = np.spacing(np.abs(expected)).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(actual == expected, 0.0, np.abs(actual.astype(np.float64) - truth) / spacing)


CASES = {
    "expm1": (jnp.expm1, np.expm1, X),
    "log1p": (jnp.log1p, np.log1p, X[np.abs(X) < 1]),
    "asinh": (jnp.arcsinh, np.arcsinh, X),
    "atanh": (jnp.arctanh, np.arctanh, X[np.abs(X) < 1]),
    "sinh": (jnp.sinh, np.sinh, X[np.abs(X) < 80]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_accurate_near_zero(name):
    fn, reference, x = CASES[name]
    text = jax.jit(fn).lower(x).as_text()  # CHLO for asinh/atanh/sinh
    actual = mlxc.compile(text)(x)
    with np.errstate(over="ignore"):
        truth = reference(x.astype(np.float64))
    # At most 3 ulp, or XLA's own error where that is larger (sinh(25) is 4.6 ulp off).
    allowed = np.maximum(3.0, ulps(np.asarray(jax.jit(fn)(x)), truth))
    worst = (ulps(actual, truth) - allowed).max()
    assert worst <= 0, f"{name}: {worst:.1f} ulp beyond the allowance"


@pytest.mark.parametrize("name", sorted(CASES))
def test_special_values_match_jax(name):
    fn = CASES[name][0]
    text, _, (expected,) = export_program(fn, SPECIAL)
    np.testing.assert_array_equal(mlxc.compile(text)(SPECIAL), expected)
