"""stablehlo.while / if / case (lax.while_loop, fori_loop, scan, cond, switch) against JAX."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import assert_matches, export_program


def _check(fn, *args, rtol=1e-5, x64=False):
    text, artifact, expected = export_program(fn, *args, x64=x64)
    exe = mlxc.compile(artifact)
    assert_matches(exe(*args), expected, rtol)
    return exe, expected


def test_while_loop_newton_sqrt():
    def f(x):
        def cond(c):
            y, i = c
            return (i < 50) & (jnp.max(jnp.abs(y * y - x)) > 1e-6)

        def body(c):
            y, i = c
            return 0.5 * (y + x / y), i + 1

        return lax.while_loop(cond, body, (x, jnp.int32(0)))

    _check(f, np.linspace(1, 100, 16, dtype=np.float32))


def test_fori_loop_dynamic_trip_count():
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, acc: acc * 1.5 + i.astype(jnp.float32), x)

    exe, _ = _check(f, np.ones((3, 4), np.float32), np.int32(5))
    # Other trip counts through the same executable, zero included.
    for n in (0, 1, 9):
        expected = np.asarray(jax.jit(f)(np.ones((3, 4), np.float32), np.int32(n)))
        np.testing.assert_allclose(exe(np.ones((3, 4), np.float32), np.int32(n)), expected, rtol=1e-6)


def test_scan_rnn_step():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 8)).astype(np.float32) * 0.3
    u = rng.standard_normal((5, 8)).astype(np.float32) * 0.3
    xs = rng.standard_normal((12, 5)).astype(np.float32)
    h0 = np.zeros(8, np.float32)

    def f(h0, xs, w, u):
        def step(h, x):
            h = jnp.tanh(h @ w + x @ u)
            return h, h.sum()

        return lax.scan(step, h0, xs)

    _check(f, h0, xs, w, u)


def test_nested_loops():
    def f(x):
        def outer(i, acc):
            return lax.fori_loop(0, i + 1, lambda j, a: a + (i * j).astype(a.dtype), acc)

        return lax.fori_loop(0, 4, outer, x)

    _check(f, np.zeros((2, 3), np.float32))


def test_loop_carrying_several_dtypes():
    def f(a, b, c, d):
        def body(i, s):
            a, b, c, d = s
            return a * np.uint32(3) + np.uint32(7), b ^ (b << 1), c + 0.25, ~d

        return lax.fori_loop(0, 7, body, (a, b, c, d))

    a = np.array([1, 2, 0xFFFFFFFF, 12345], np.uint32)
    b = np.array([[1, -2], [3, 4]], np.int8)
    c = np.arange(6, dtype=np.float64).reshape(2, 3)
    d = np.array([True, False, True])
    args = (a, b, c, d)
    copies = [x.copy() for x in args]
    _check(f, *args, x64=True)
    for x, y in zip(args, copies):  # the caller's arrays are never written
        np.testing.assert_array_equal(x, y)


def test_while_loop_unsigned_counter():
    def f(x):
        return lax.while_loop(lambda c: c[0] < np.uint8(200), lambda c: (c[0] + np.uint8(60), c[1] * 2), (x, 1))

    _check(f, np.uint8(10))


@pytest.mark.parametrize("pred", [True, False])
def test_cond(pred):
    def f(p, x, y):
        return lax.cond(p, lambda: (x @ y, jnp.sum(x)), lambda: (x @ y.T.T * 2, jnp.max(x)))

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.arange(8, dtype=np.float32).reshape(4, 2)
    _check(f, np.bool_(pred), x, y)


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 7])
def test_switch_clamps_index(index):
    def f(i, x):
        return lax.switch(i, [lambda x: x + 1, lambda x: jnp.sin(x), lambda x: x * x], x)

    _check(f, np.int32(index), np.linspace(-1, 1, 10, dtype=np.float32))


def test_cond_inside_loop():
    def f(x):
        def body(i, acc):
            return lax.cond(i % 2 == 0, lambda a: a + i, lambda a: a * 2, acc)

        return lax.fori_loop(0, 6, body, x)

    _check(f, np.array([1, 2, 3], np.int32))


# One branch hands the loop-carried buffer back unchanged, the other a new one: who
# owns the buffer is known only at run time, so its free is a call to a generated
# @dealloc_helper (which the bare-pointer calling convention could not express).
IF_KEEPS_CARRY = """
func.func @main(%x: tensor<8xf32>, %n: tensor<f32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c10 = stablehlo.constant dense<10> : tensor<i32>
  %one = stablehlo.constant dense<1.0> : tensor<8xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<8xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %c10 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = stablehlo.reduce(%v init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
      %p = stablehlo.compare GT, %s, %n : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %w = "stablehlo.if"(%p) ({
        stablehlo.return %v : tensor<8xf32>
      }, {
        %b = stablehlo.add %v, %one : tensor<8xf32>
        stablehlo.return %b : tensor<8xf32>
      }) : (tensor<i1>) -> tensor<8xf32>
      %i2 = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %i2, %w : tensor<i32>, tensor<8xf32>
    }
  return %r#1 : tensor<8xf32>
}
"""


@pytest.mark.parametrize("bound", [40.0, 60.0, 1000.0])
def test_if_returning_the_loop_carry_unchanged(bound):
    x = np.arange(8, dtype=np.float32)
    x_before = x.copy()
    actual = mlxc.compile(IF_KEEPS_CARRY)(x, np.float32(bound))
    expected = x.copy()
    for _ in range(10):
        if expected.sum() <= bound:
            expected = expected + 1.0
    np.testing.assert_array_equal(actual, expected)
    np.testing.assert_array_equal(x, x_before)
    # The same from JAX: cond(pred, identity, add) in a fori_loop.
    _check(lambda v: lax.fori_loop(0, 10, lambda i, c: lax.cond(
        c.sum() > bound, lambda a: a, lambda a: a + 1.0, c), v), x)


CASE_OUT_OF_RANGE = """
func.func @main(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "stablehlo.case"(%i) ({
    %0 = stablehlo.add %x, %x : tensor<3xf32>
    stablehlo.return %0 : tensor<3xf32>
  }, {
    %0 = stablehlo.multiply %x, %x : tensor<3xf32>
    stablehlo.return %0 : tensor<3xf32>
  }, {
    %0 = stablehlo.negate %x : tensor<3xf32>
    stablehlo.return %0 : tensor<3xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
"""


def test_case_out_of_range_index_takes_last_branch():
    # JAX clamps before stablehlo.case; the op itself sends any index outside
    # [0, branches) to the last branch.
    exe = mlxc.compile(CASE_OUT_OF_RANGE)
    x = np.array([1, 2, 3], np.float32)
    expected = {0: x + x, 1: x * x, 2: -x}
    for i in (-1, 0, 1, 2, 3, 2**31 - 1, -2**31):
        np.testing.assert_array_equal(exe(np.int32(i), x), expected.get(i, -x))


# A case's result that is also returned, or read after another op, must keep its value:
# an op computed from it may not write over its buffer (scf.index_switch results hid
# that conflict from one-shot bufferization; the case is now a chain of scf.if).
CASE_RESULT_REUSED = """
func.func @main(%index: tensor<i32>, %x: tensor<SHAPEui32>) -> (tensor<SHAPEui32>, tensor<SHAPEui32>, tensor<SHAPEui32>) {
  %lo = stablehlo.constant dense<0> : tensor<i32>
  %hi = stablehlo.constant dense<2> : tensor<i32>
  %i = stablehlo.clamp %lo, %index, %hi : tensor<i32>
  %c = "stablehlo.case"(%i) ({
    %k = stablehlo.constant dense<1> : tensor<SHAPEui32>
    %0 = stablehlo.add %x, %k : tensor<SHAPEui32>
    stablehlo.return %0 : tensor<SHAPEui32>
  }, {
    %k = stablehlo.constant dense<5> : tensor<SHAPEui32>
    %0 = stablehlo.multiply %x, %k : tensor<SHAPEui32>
    stablehlo.return %0 : tensor<SHAPEui32>
  }, {
    %k = stablehlo.constant dense<7> : tensor<SHAPEui32>
    %0 = stablehlo.subtract %x, %k : tensor<SHAPEui32>
    stablehlo.return %0 : tensor<SHAPEui32>
  }) : (tensor<i32>) -> tensor<SHAPEui32>
  %three = stablehlo.constant dense<3> : tensor<SHAPEui32>
  %d = stablehlo.multiply %c, %three : tensor<SHAPEui32>
  %e = stablehlo.xor %d, %c : tensor<SHAPEui32>
  return RESULTS
}
"""


@pytest.mark.parametrize("shape", ["", "4x"])
@pytest.mark.parametrize("results", ["%c, %d, %e", "%c, %d"])
def test_case_result_returned_and_reused(shape, results):
    types = ", ".join(["tensor<SHAPEui32>"] * (results.count(",") + 1))
    text = CASE_RESULT_REUSED.replace("RESULTS", f"{results} : {types}")
    text = text.replace(") -> (tensor<SHAPEui32>, tensor<SHAPEui32>, tensor<SHAPEui32>)",
                        f") -> ({types})")
    exe = mlxc.compile(text.replace("SHAPE", shape))
    x = np.array(11 if not shape else [11, 0, 2**32 - 1, 6], np.uint32)
    for i in (-1, 0, 1, 2, 3):
        c = [x + np.uint32(1), x * np.uint32(5), x - np.uint32(7)][min(max(i, 0), 2)]
        d = c * np.uint32(3)
        got = exe(np.int32(i), x)
        for g, want in zip(got, (c, d, d ^ c)):
            np.testing.assert_array_equal(g, want)


_BRANCHES = [lambda x, y: x + y, lambda x, y: x * 5, lambda x, y: x - y * 7,
             lambda x, y: x ^ y, lambda x, y: x >> 1]
_AFTER = [lambda c, y: c * 3, lambda c, y: c + y, lambda c, y: c ^ 9, lambda c, y: -c,
          lambda c, y: c * c]


@pytest.mark.parametrize("seed", range(6))
def test_switch_results_reused_random_programs(seed):
    # Random switches of 2-4 branches whose result is returned next to values computed
    # from it, in place where a buffer dies (scalars and vectors, ui32 and i32).
    rng = np.random.default_rng(seed)
    branches = [_BRANCHES[k] for k in rng.permutation(len(_BRANCHES))[:rng.integers(2, 5)]]
    after = [_AFTER[k] for k in rng.permutation(len(_AFTER))[:2]]
    dtype = [np.uint32, np.int32][seed % 2]
    shape = [(), (5,)][seed // 2 % 2]

    def f(i, x, y):
        c = lax.switch(i, branches, x, y)
        d = after[0](c, y)
        e = after[1](d, c)
        return (c, d, e) if seed % 3 else (e, c, d)

    x = rng.integers(0, 1000, shape).astype(dtype)
    y = rng.integers(0, 1000, shape).astype(dtype)
    exe = None
    for i in range(-1, len(branches) + 1):
        if exe is None:
            exe, _ = _check(f, np.int32(i), x, y)
        else:
            assert_matches(exe(np.int32(i), x, y), jax.jit(f)(np.int32(i), x, y), 0)


# --- counted loops (constant bounds) become scf.for --------------------------------

def _lowered(fn, *args) -> str:
    text, _, _ = export_program(fn, *args)
    return str(mlxc.lower(text, stop_after="linalg"))


def test_scan_counter_used_as_a_value():
    # The counter read as data (converted, broadcast) and as an index (dynamic_slice),
    # a stacked output written per step, a carried state recomputed each step.
    def f(xs, h):
        def body(i, c):
            h, ys = c
            h = jnp.cos(h) * 0.5 + xs[i] + i.astype(jnp.float32)
            return h, ys.at[i].set(h.sum())

        return lax.fori_loop(0, xs.shape[0], body, (h, jnp.zeros(xs.shape[0], h.dtype)))

    xs = np.linspace(-1, 1, 7 * 5, dtype=np.float32).reshape(7, 5)
    _check(f, xs, np.ones(5, np.float32))
    assert "scf.for" in _lowered(f, xs, np.ones(5, np.float32))


def test_while_loop_counter_returned():
    # The final counter (the bound) is a result; the start is not 0.
    def f(x):
        return lax.while_loop(lambda c: c[0] < 11, lambda c: (c[0] + 1, c[1] * 1.25 + 1), (3, x))

    x = np.arange(4, dtype=np.float32)
    _check(f, x)
    lowered = _lowered(f, x)
    assert "scf.for" in lowered and "scf.while" not in lowered


@pytest.mark.parametrize("start,bound", [(5, 3), (4, 4)])
def test_loop_that_never_runs_stays_a_while(start, bound):
    def f(x):
        return lax.while_loop(lambda c: c[0] < bound, lambda c: (c[0] + 1, c[1] * 2), (start, x))

    x = np.arange(4, dtype=np.float32)
    _check(f, x)
    assert "scf.while" in _lowered(f, x)


def test_counted_loop_i64_and_nested():
    def f(x):
        def outer(i, acc):
            inner = lax.fori_loop(0, 3, lambda j, a: a * 1.5 + (i * j).astype(a.dtype), acc)
            return inner - i.astype(acc.dtype)

        return lax.fori_loop(jnp.int64(2), jnp.int64(6), outer, x)

    x = np.linspace(0, 1, 6).reshape(2, 3)
    _check(f, x, x64=True)
    text, _, _ = export_program(f, x, x64=True)
    lowered = str(mlxc.lower(text, stop_after="linalg"))
    assert lowered.count("scf.for") >= 2 and "scf.while" not in lowered


# --- a loop that only reads its initial state starts from the input ------------------

def _rnn(h0, xs, w):
    return lax.scan(lambda h, x: (jnp.tanh(h @ w + x), h.sum()), h0, xs)


def test_scan_reads_its_input_state_uncopied():
    rng = np.random.default_rng(3)
    h0 = rng.standard_normal((4, 8)).astype(np.float32)
    xs = rng.standard_normal((6, 4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 8)) * 0.3).astype(np.float32)
    before = h0.copy()
    exe, _ = _check(_rnn, h0, xs, w)
    np.testing.assert_array_equal(h0, before)  # the input the loop started from
    # The states the loop allocates, and no copy of h0 beside them (with one, the
    # figure is 2 * h0.nbytes).
    assert exe.memory_stats()["temp_bytes"] < 2 * h0.nbytes


def test_input_state_shared_by_loops_and_results():
    # h0 starts two loops, is read after them and returned as it is: each use sees the
    # caller's values, and nothing writes them.
    def f(h0, xs, w):
        h1, ys1 = _rnn(h0, xs, w)
        h2, ys2 = _rnn(h0, xs * 2, w)
        return h1 + h0, h2, ys1 + ys2, h0, h0 * 3

    rng = np.random.default_rng(4)
    h0 = rng.standard_normal((4, 8)).astype(np.float32)
    xs = rng.standard_normal((5, 4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 8)) * 0.3).astype(np.float32)
    before = h0.copy()
    _check(f, h0, xs, w)
    np.testing.assert_array_equal(h0, before)


def test_two_carried_inputs():
    def f(a, b):
        return lax.fori_loop(0, 4, lambda i, s: (s[1] * 0.5, s[0] + 1.0), (a, b))

    a = np.arange(6, dtype=np.float32)
    b = -np.arange(6, dtype=np.float32)
    _check(f, a, b)


@pytest.mark.parametrize("trips", [1, 3])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32])
def test_fori_loop_whose_two_updates_cse_merges(dtype, trips):
    # a + b and b + a (max(a, b) and max(b, a)) are one value after canonicalization and
    # cse; the lowering had materialized each into its own loop argument, which one value
    # cannot satisfy ("cannot avoid RaW conflict", fuzz case control/10351), and a loop
    # of one trip folds away, leaving the materialization's destination a read-only
    # argument ("would write to read-only buffer", control/13400).
    def f(x, y):
        body = lambda i, c: (c[0] + c[1], c[1] + c[0], jnp.maximum(c[2], c[3]),
                             jnp.maximum(c[3], c[2]))
        return jax.lax.fori_loop(0, trips, body, (x, x, x, y))[1:]

    x, y = np.array(3, dtype), np.array(5, dtype)
    exe = mlxc.compile(jax.export.export(jax.jit(f))(x, y).mlir_module())
    for a, e in zip(exe(x, y), jax.jit(f)(x, y)):
        np.testing.assert_array_equal(a, e)
