"""mlxc-approximate-math: f32 exp, log, tanh, logistic and erf against float64 and XLA.

Each function runs over a dense sweep of f32 bit patterns (every STRIDE-th one, so
every exponent and sign, normals and subnormals, plus the edge cases) and is checked
in units in the last place against numpy/scipy in float64, and against jax.jit, whose
algorithms the pass follows. XLA runs with subnormals flushed to zero and mlxc does
not, so comparisons with XLA leave out subnormal inputs and results.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special

import mlxc
from helpers import export_program

STRIDE = 1021
F32_MIN = np.float32(1.1754944e-38)  # the smallest normal f32
EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, F32_MIN, -F32_MIN,
                  3.4028235e38, -3.4028235e38, 88.72283, 88.72284, 88.8, 89.0, -87.3365, -87.8,
                  -103.9, -104.0, 0.0004, -0.0004, 0.00039999, 7.9988117, -7.9988117, 9.0, 20.0,
                  -20.0, 3.8325068, -3.8325068, 4.0, 1e-30, -1e-30], np.float32)


def sweep() -> np.ndarray:
    bits = np.arange(0, 2**32, STRIDE, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits.view(np.float32), EDGES])


def ulps(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Distance in f32 steps between two f32 arrays (0 for two NaNs, huge for one)."""
    def ordered(a):
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    d = np.abs(ordered(actual) - ordered(expected))
    d[np.isnan(actual) & np.isnan(expected)] = 0
    d[np.isnan(actual) ^ np.isnan(expected)] = 1 << 40
    return d


def reference(fn, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return fn(x.astype(np.float64)).astype(np.float32)


def compile_jax(fn, x: np.ndarray):
    text, _, _ = export_program(fn, x)
    return mlxc.compile(text)


def compile_math(op: str, x: np.ndarray):
    """A program applying math.<op> elementwise: for ops no StableHLO program reaches
    as such (JAX's erf is expanded by CHLO at import), so the stage contracts are off."""
    n = x.size
    text = f"""
#map = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %e = tensor.empty() : tensor<{n}xf32>
  %0 = linalg.generic {{indexing_maps = [#map, #map], iterator_types = ["parallel"]}}
      ins(%x : tensor<{n}xf32>) outs(%e : tensor<{n}xf32>) {{
  ^bb0(%a: f32, %b: f32):
    %r = math.{op} %a : f32
    linalg.yield %r : f32
  }} -> tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}"""
    with mlxc.settings.override(check_contracts=False):
        return mlxc.compile(text)


def normal(*arrays) -> np.ndarray:
    """Where every array is NaN, zero, infinite or at least F32_MIN in magnitude."""
    keep = np.ones(arrays[0].shape, bool)
    for a in arrays:
        keep &= ~(np.abs(a) < F32_MIN) | (a == 0)
    return keep


# name: (jax function, float64 reference, max ulp over normal results, min % equal to XLA)
CASES = {
    "exp": (jnp.exp, np.exp, 5, 99.99),
    "log": (jnp.log, np.log, 1, 99.5),  # XLA calls libm here; we are within 1 ulp
    "tanh": (jnp.tanh, np.tanh, 4, 100.0),
    "logistic": (jax.nn.sigmoid, scipy.special.expit, 4, 99.99),
}


@pytest.fixture(scope="module")
def x():
    return sweep()


@pytest.mark.parametrize("name", sorted(CASES))
def test_ulp_error_against_float64(name, x):
    fn, ref, bound, _ = CASES[name]
    actual = compile_jax(fn, x)(x)
    expected = reference(ref, x)
    keep = normal(expected)
    err = ulps(actual, expected)
    worst = int(np.argmax(np.where(keep, err, 0)))
    assert err[keep].max() <= bound, (
        f"{name}({x[worst]!r}) = {actual[worst]!r}, expected {expected[worst]!r}: "
        f"{err[worst]} ulp > {bound}")
    # Subnormal results: within one subnormal step of F32_MIN (XLA flushes them all).
    tiny = ~keep
    assert np.all(np.abs(actual[tiny].astype(np.float64) - expected[tiny]) <= F32_MIN)


@pytest.mark.parametrize("name", sorted(CASES))
def test_agrees_with_xla(name, x):
    fn, _, _, min_equal = CASES[name]
    actual = compile_jax(fn, x)(x)
    xla = np.asarray(jax.jit(fn)(x))
    keep = normal(x, xla, actual)
    err = ulps(actual[keep], xla[keep])
    equal = 100.0 * np.mean(err == 0)
    assert equal >= min_equal, f"{name}: only {equal:.4f}% bit-equal to XLA"
    assert err.max() <= CASES[name][2], f"{name}: {err.max()} ulp from XLA"


def test_exp_accuracy_away_from_overflow(x):
    # 5 ulp is only reached just under the overflow threshold, as in XLA.
    keep = np.abs(x) < 88.0
    actual = compile_jax(jnp.exp, x[keep])(x[keep])
    expected = reference(np.exp, x[keep])
    assert ulps(actual, expected)[normal(expected)].max() <= 1


def test_erf(x):
    actual = compile_math("erf", x)(x)
    expected = reference(scipy.special.erf, x)
    keep = normal(x, expected)
    assert ulps(actual, expected)[keep].max() <= 5  # XLA's own bound is 5 over this sweep
    # Same algorithm as XLA's (JAX's erf reaches XLA as one op, unlike mlxc's import).
    xla = np.asarray(jax.jit(jax.scipy.special.erf)(x))
    keep &= normal(xla, actual)
    assert np.mean(ulps(actual[keep], xla[keep]) == 0) >= 0.999
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 10.0, -10.0], np.float32)
    got = compile_math("erf", special)(special)
    np.testing.assert_array_equal(got, [0.0, -0.0, 1.0, -1.0, np.nan, 1.0, -1.0])
    assert np.signbit(got[1])


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 89.0, -89.0,
                    -104.0, 1e-30, -1e-30, 30.0, -30.0], np.float32)


@pytest.mark.parametrize("name", ["exp", "log", "tanh"])
def test_special_values(name):
    # IEEE results: exp(-inf) = +0, exp(inf) = inf, log(+-0) = -inf, log(x < 0) = NaN,
    # tanh(-0) = -0, tanh(+-inf) = +-1, NaN -> NaN; subnormal inputs too.
    fn, ref, _, _ = CASES[name]
    actual = compile_jax(fn, SPECIAL)(SPECIAL)
    expected = reference(ref, SPECIAL)
    keep = normal(expected)  # exp(-89) is subnormal: flushed to 0 as XLA does
    assert np.all(ulps(actual, expected)[keep] <= 1), (name, SPECIAL, actual, expected)
    assert np.all(np.abs(actual[~keep]) <= F32_MIN)
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(actual[zeros]), np.signbit(expected[zeros]))


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16])
def test_half_precision_uses_f32_approximation(dtype):
    # f16/bf16 math is computed in f32 and rounded: at most one step from the
    # correctly rounded result.
    x = np.linspace(-10, 10, 4001).astype(dtype)
    for fn, ref in ((jnp.exp, np.exp), (jnp.tanh, np.tanh)):
        actual = compile_jax(fn, x)(x).astype(np.float64)
        expected = ref(x.astype(np.float64)).astype(dtype)
        step = np.spacing(np.abs(expected)).astype(np.float64)
        assert np.all(np.abs(actual - expected.astype(np.float64)) <= step), fn


def test_setting_off_keeps_libm():
    x = np.array([0.5, 1.5], np.float32)
    text, _, _ = export_program(jnp.exp, x)
    with mlxc.settings.override(approx_math=False):
        assert "mlxc-approximate-math" not in str(mlxc.pipeline())
        lowered = str(mlxc.lower(text, stop_after="lower"))
    assert "math.exp" in lowered
    assert "math.exp" not in str(mlxc.lower(text, stop_after="lower"))


@pytest.mark.parametrize("fn, ref, bound", [(jnp.expm1, np.expm1, 5), (jnp.log1p, np.log1p, 2)],
                         ids=["expm1", "log1p"])
def test_expm1_log1p_on_the_approximations(fn, ref, bound, x):
    # mlxc-precise-expm1-log1p rewrites them with exp and log, which this pass expands;
    # large arguments stay finite (expm1(84.3) ~ 4e36, log1p(4e36) ~ 84.3).
    actual = compile_jax(fn, x)(x)
    expected = reference(ref, x)
    keep = normal(expected)
    assert ulps(actual, expected)[keep].max() <= bound
    big = np.array([84.28864, 88.0, 4.0371157e36, 3e38], np.float32)
    np.testing.assert_array_less(ulps(compile_jax(fn, big)(big), reference(ref, big)), bound + 1)


# f64: exp follows XLA's f64 algorithm (a Cephes rational function), so results are
# XLA's bit for bit; tanh is libm's (XLA's rational function is up to 6 ulp off), and
# expm1 XLA's formula tanh(x/2)(e^x + 1) on them, so expm1 and sinh stay within a few
# ulp of XLA's and closer to the truth.
F64_EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 0.5, -0.5,
                      0.49999999999999994, 709.78, 709.782712893384, 709.79, 710.0,
                      -708.3964185322641, -708.4, -745.2, 17.7, 17.8, 19.99, 20.0, -20.0,
                      40.0, -40.0, -0.2046941658885098, 1e-8, -1e-8])


def f64_sweep() -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.concatenate([rng.uniform(-1, 1, 4000), rng.uniform(-40, 40, 4000),
                           rng.uniform(-750, 750, 2000), F64_EDGES])


def _compile_f64(fn, x):
    text, _, _ = export_program(fn, x, x64=True)
    return mlxc.compile(text)(x)


def test_f64_exp_bit_equal_to_xla():
    x = f64_sweep()
    actual = _compile_f64(jnp.exp, x)
    with jax.enable_x64(True):
        xla = np.asarray(jax.jit(jnp.exp)(x))
    keep = (np.abs(xla) != 0) & (~(np.abs(x) < 2.3e-308) | (x == 0))  # XLA flushes subnormals
    np.testing.assert_array_equal(actual[keep], xla[keep])
    # Where XLA's exp flushes a result to 0, so do we (and both are 0 below -708.4).
    np.testing.assert_array_equal(actual[~keep & (xla == 0)], 0.0)


def test_f64_tanh_is_libm():
    x = f64_sweep()
    np.testing.assert_array_equal(_compile_f64(jnp.tanh, x), [math.tanh(v) for v in x])


# fn: (largest ulp error against the truth, the |x| below which it is measured, largest
# ulp distance from XLA: XLA's own error, up to 4 ulp, plus ours). sinh beyond |x| >= 1
# is exp(x - log 2) - exp(-x - log 2), whose x - log 2 rounds.
F64_BOUNDS = {jnp.expm1: (3, np.inf, 6), jnp.sinh: (4, 1.0, 6)}


@pytest.mark.parametrize("fn", list(F64_BOUNDS), ids=["expm1", "sinh"])
def test_f64_expm1_sinh_accuracy(fn):
    x = f64_sweep()
    x = x[~(np.abs(x) < 2.3e-308) | (x == 0)]  # XLA flushes subnormal inputs
    actual = _compile_f64(fn, x)
    with jax.enable_x64(True):
        xla = np.asarray(jax.jit(fn)(x))
    with np.errstate(over="ignore"):
        truth = getattr(np, fn.__name__)(x)
    bound, below, from_xla = F64_BOUNDS[fn]
    finite = np.isfinite(xla)
    np.testing.assert_array_equal(actual[~finite], xla[~finite])
    step = np.spacing(np.abs(xla[finite]))
    assert np.max(np.abs(actual[finite] - xla[finite]) / step) <= from_xla
    measured = np.isfinite(truth) & (np.abs(truth) > 1e-300) & (np.abs(x) < below)
    error = np.abs(actual[measured] - truth[measured]) / np.spacing(np.abs(truth[measured]))
    assert error.max() <= bound, f"{error.max()} ulp at x = {x[measured][np.argmax(error)]!r}"


def test_f64_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 800.0, -800.0, 25.0, -25.0])
    with np.errstate(over="ignore"):
        expected_of = {jnp.exp: np.exp(x), jnp.tanh: np.tanh(x), jnp.expm1: np.expm1(x)}
    for fn, expected in expected_of.items():
        text, _, _ = export_program(fn, x, x64=True)
        actual = mlxc.compile(text)(x)
        np.testing.assert_allclose(actual, expected, rtol=1e-15)
        zeros = expected == 0
        np.testing.assert_array_equal(np.signbit(actual[zeros]), np.signbit(expected[zeros]))
