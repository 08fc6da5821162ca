"""Random numbers: stablehlo.rng_bit_generator bit for bit against XLA on the CPU, JAX's
rbg/unsafe_rbg PRNGs, and stablehlo.rng (mlxc.lowerings.random) by its statistics."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlxc

from helpers import export_program


def _xla_cpu(text: str, *inputs) -> list[np.ndarray]:
    """Run StableHLO text with XLA's CPU compiler, through jaxlib, as the reference."""
    from jax._src import xla_bridge
    from jax._src.lib import xla_client

    backend = xla_bridge.get_backend("cpu")
    exe = backend.compile_and_load(text, xla_client.DeviceList(tuple(backend.devices()[:1])),
                                   xla_client.CompileOptions())
    with jax.enable_x64(True):
        out = exe.execute_sharded([jax.device_put(x) for x in inputs])
    return [np.asarray(x[0]) for x in out.disassemble_into_single_device_arrays()]


def _rbg_program(algorithm: str, words: int, elem: str, shape: tuple) -> str:
    st = f"tensor<{words}xui64>"
    ot = "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"
    return f"""module @m {{
  func.func public @main(%k: {st}) -> ({st}, {ot}) {{
    %s, %o = stablehlo.rng_bit_generator %k, algorithm = {algorithm} : ({st}) -> ({st}, {ot})
    return %s, %o : {st}, {ot}
  }}
}}"""


CASES = ([(alg, 2) for alg in ("THREE_FRY", "PHILOX", "DEFAULT")]
         + [("PHILOX", 3), ("DEFAULT", 3)])


@pytest.mark.parametrize("algorithm,words", CASES)
@pytest.mark.parametrize("elem", ["ui8", "ui16", "ui32", "ui64", "i32", "i64"])
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (1001,)])
def test_rng_bit_generator_is_bit_identical_to_xla(algorithm, words, elem, shape):
    text = _rbg_program(algorithm, words, elem, shape)
    # A counter near 2^64 makes the 128-bit carry happen inside the output.
    state = np.array([0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFF0, 77][:words], np.uint64)
    expected = _xla_cpu(text, state)
    saved = state.copy()
    got = mlxc.compile(text)(state)
    np.testing.assert_array_equal(state, saved)
    for g, x in zip(got, expected):
        assert g.shape == x.shape
        # XLA hands signed results back as unsigned arrays: compare the bits.
        assert g.tobytes() == x.tobytes()


def test_new_state_feeds_the_next_call():
    text = _rbg_program("PHILOX", 3, "ui32", (5,))
    exe = mlxc.compile(text)
    state = np.array([1, 2, 3], np.uint64)
    first_state, first = exe(state)
    second_state, second = exe(first_state)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(second, _xla_cpu(text, first_state)[1])
    np.testing.assert_array_equal(second_state, _xla_cpu(text, first_state)[0])


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
@pytest.mark.parametrize("name", ["bits32", "bits8", "bits64", "uniform", "normal",
                                  "split", "fold_in", "permutation"])
def test_jax_random_with_rbg_keys(impl, name):
    programs = {
        "bits32": lambda k: jax.random.bits(k, (3, 5, 7), jnp.uint32),
        "bits8": lambda k: jax.random.bits(k, (13,), jnp.uint8),
        "bits64": lambda k: jax.random.bits(k, (4, 3), jnp.uint64),
        "uniform": lambda k: jax.random.uniform(k, (4, 9)),
        "normal": lambda k: jax.random.normal(k, (4, 9)),
        "split": lambda k: jax.random.key_data(jax.random.split(k, 3)),
        "fold_in": lambda k: jax.random.key_data(jax.random.fold_in(k, 17)),
        "permutation": lambda k: jax.random.permutation(k, 10),
    }
    x64 = name == "bits64"
    key_data = np.asarray(jax.random.key_data(jax.random.key(1234, impl=impl)))

    def f(data):
        return programs[name](jax.random.wrap_key_data(data, impl=impl))

    text, _, expected = export_program(f, key_data, x64=x64)
    # rbg derives new keys with threefry (a stablehlo.while), not with the generator.
    assert ("rng_bit_generator" in text) != (impl == "rbg" and name in ("split", "fold_in"))
    got = mlxc.compile(text)(key_data)
    if expected[0].dtype.kind == "f":
        np.testing.assert_allclose(got, expected[0], rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, expected[0])


def _rng_program(dist: str, elem: str, shape: tuple, ops: int = 1) -> str:
    t = "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"
    dims = f"tensor<{len(shape)}xi64>"
    body = "".join(
        f"    %r{i} = stablehlo.rng %a, %b, %s, distribution = {dist} : "
        f"(tensor<{elem}>, tensor<{elem}>, {dims}) -> {t}\n" for i in range(ops))
    results = ", ".join(f"%r{i}" for i in range(ops))
    return f"""func.func @main(%a: tensor<{elem}>, %b: tensor<{elem}>) -> ({", ".join([t] * ops)}) {{
    %s = stablehlo.constant dense<{list(shape)}> : {dims}
{body}    return {results} : {", ".join([t] * ops)}
}}"""


_NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
       "i32": np.int32, "i64": np.int64, "ui8": np.uint8}


@pytest.mark.parametrize("elem", ["f32", "f64", "f16", "bf16"])
def test_rng_uniform_floats(elem):
    dt = _NP[elem]
    u, v = mlxc.compile(_rng_program("UNIFORM", elem, (300, 301), ops=2))(dt(-1), dt(3))
    u, v = u.astype(np.float64), v.astype(np.float64)
    n = u.size
    assert u.min() >= -1 and u.max() < 3  # [a, b)
    assert abs(u.mean() - 1) < 5 * (4 / np.sqrt(12)) / np.sqrt(n) + (0.02 if elem == "bf16" else 0)
    assert abs(u.std() - 4 / np.sqrt(12)) < 0.01
    # Independent neighbours and independent ops (upstream's lowering fails both).
    assert abs(np.corrcoef(u[:, :-1].ravel(), u[:, 1:].ravel())[0, 1]) < 0.02
    assert abs(np.corrcoef(u.ravel(), v.ravel())[0, 1]) < 0.02
    assert np.histogram(u, 8, range=(-1, 3))[0].min() > n / 8 * 0.95


@pytest.mark.parametrize("elem", ["f32", "f64", "bf16"])
def test_rng_normal(elem):
    dt = _NP[elem]
    exe = mlxc.compile(_rng_program("NORMAL", elem, (400, 250)))
    z = exe(dt(3), dt(2)).astype(np.float64)
    assert np.isfinite(z).all()
    assert abs(z.mean() - 3) < 5 * 2 / np.sqrt(z.size) + (0.02 if elem == "bf16" else 0)
    assert abs(z.std() - 2) < 0.02
    # Tails as a normal's: about 0.27% beyond three sigma.
    assert 0.0015 < np.mean(np.abs(z - 3) > 6) < 0.004
    np.testing.assert_array_equal(exe(dt(3), dt(2)), exe(dt(3), dt(2)))  # no state


@pytest.mark.parametrize("elem,low,high", [("i32", -5, 7), ("i64", -(2**62), 2**62),
                                           ("ui8", 2, 250)])
def test_rng_uniform_integers(elem, low, high):
    dt = _NP[elem]
    r = mlxc.compile(_rng_program("UNIFORM", elem, (100000,)))(dt(low), dt(high))
    assert r.dtype == np.dtype(dt)
    assert r.min() >= low and r.max() < high
    span = float(high) - float(low)
    assert abs(r.astype(np.float64).mean() - (float(low) + float(high) - 1) / 2) < 0.01 * span
    if span < 1000:
        assert len(np.unique(r)) == int(span)


def test_rng_empty_integer_range_gives_low():
    r = mlxc.compile(_rng_program("UNIFORM", "i32", (10,)))(np.int32(4), np.int32(4))
    np.testing.assert_array_equal(r, np.full(10, 4, np.int32))


@pytest.mark.parametrize("algorithm", ["PHILOX", "THREE_FRY"])
def test_empty_output_keeps_the_state(algorithm):
    text = _rbg_program(algorithm, 2, "ui32", (0, 4))
    state = np.array([5, 6], np.uint64)
    got = mlxc.compile(text)(state)
    expected = _xla_cpu(text, state)
    assert got[1].shape == (0, 4)
    np.testing.assert_array_equal(got[0], expected[0])


def test_rng_empty_shape():
    r = mlxc.compile(_rng_program("NORMAL", "f32", (0, 3)))(np.float32(0), np.float32(1))
    assert r.shape == (0, 3) and r.dtype == np.float32
