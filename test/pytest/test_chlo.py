"""CHLO text: what `jax.jit(f).lower(x).as_text()` prints (chlo.erf, chlo.lgamma, ...).

These bindings register no CHLO dialect of their own; mlxc loads it into each context
and the import stage rewrites CHLO into StableHLO. Each program is checked to really
contain the CHLO op, then compiled from that text and compared with JAX.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from helpers import assert_matches

X = np.linspace(0.05, 3.0, 24, dtype=np.float32).reshape(4, 6)
UNIT = np.linspace(-0.95, 0.95, 24, dtype=np.float32).reshape(4, 6)

PROGRAMS = {
    "erf": (jax.scipy.special.erf, X, "chlo.erf"),
    "erfc": (jax.scipy.special.erfc, X, "chlo.erfc"),
    "erf_inv": (jax.scipy.special.erfinv, UNIT, "chlo.erf_inv"),
    "lgamma": (jax.lax.lgamma, X, "chlo.lgamma"),
    "digamma": (jax.lax.digamma, X, "chlo.digamma"),
    "bessel_i1e": (jax.lax.bessel_i1e, X, "chlo.bessel_i1e"),
    "nextafter": (lambda x: jnp.nextafter(x, jnp.float32(0)), X, "chlo.next_after"),
    "asin": (jnp.arcsin, UNIT, "chlo.asin"),
    "cosh": (jnp.cosh, UNIT, "chlo.cosh"),
    "polygamma": (lambda x: jax.scipy.special.polygamma(1, x), X, "chlo.polygamma"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_chlo_text_matches_jax(name):
    fn, x, op = PROGRAMS[name]
    text = jax.jit(fn).lower(x).as_text()
    assert op in text, f"JAX no longer prints {op} for {name}; pick another program"
    expected = np.asarray(jax.jit(fn)(x))
    assert_matches(mlxc.compile(text)(x), (expected,), rtol=1e-5)


def test_no_chlo_left_after_import():
    text = jax.jit(lambda x: jax.scipy.special.erf(x) * 2).lower(X).as_text()
    assert "chlo." not in mlxc.lower(text, stop_after="import")
