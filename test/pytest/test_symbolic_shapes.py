"""Programs exported by jax.export with symbolic shapes (`symbolic_shape("b, 4")`):
their @shape_assertion checks hold or raise ValueError at call time with JAX's message
(mlxc-shape-assertions), the dimension sizes JAX passes to the wrapped function are
computed from the shapes, and the arguments keep their names; results against jax.jit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

import mlxc

S = jax.ShapeDtypeStruct


def _compile(fn, *specs):
    text = export.export(jax.jit(fn))(*specs).mlir_module()
    assert "@shape_assertion" in text
    return mlxc.compile(text)


def _check(exe, fn, *args):
    got = exe(*args)
    want = jax.jit(fn)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _f32(*shape):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def test_batch_dimension():
    fn = lambda x: jnp.sin(x) * 2 + x.sum() + jnp.arange(x.shape[0], dtype=x.dtype)[:, None]
    exe = _compile(fn, S(export.symbolic_shape("b, 4"), jnp.float32))
    assert str(exe.signature) == "main(x: f32[?,4]) -> (result: f32[?,4])"
    for b in (1, 3, 8):
        _check(exe, fn, _f32(b, 4))
    assert exe.num_specializations == 3
    assert str(exe.specialization(_f32(3, 4)).signature) == "main(x: f32[3,4]) -> (result: f32[3,4])"
    with pytest.raises(ValueError, match=r"Expected value >= 1 for dimension variable 'b'.*"
                                         r"'b' = 0 from specification 'b'"):
        exe(_f32(0, 4))
    _check(exe, fn, _f32(2, 4))  # still usable


def test_arguments_sharing_a_dimension():
    b, = export.symbolic_shape("b")
    fn = lambda x, y: x * y + x.mean(0)
    exe = _compile(fn, S((b, 3), jnp.float32), S((b, 3), jnp.float32))
    assert [s.name for s in exe.signature.inputs] == ["x", "y"]
    _check(exe, fn, _f32(5, 3), _f32(5, 3))
    with pytest.raises(ValueError, match=r"inconsistency between dimension size "
                                         r"args\[1\]\.shape\[0\] \(= 4\) and the "
                                         r"specification 'b' \(= 5\)"):
        exe(_f32(5, 3), _f32(4, 3))


def test_derived_dimension():
    b, = export.symbolic_shape("b")
    fn = lambda x, y: jnp.concatenate([x, x]) + y
    exe = _compile(fn, S((b, 4), jnp.float32), S((2 * b, 4), jnp.float32))
    _check(exe, fn, _f32(3, 4), _f32(6, 4))
    with pytest.raises(ValueError, match=r"args\[1\]\.shape\[0\] \(= 5\) and the "
                                         r"specification '2\*b' \(= 6\)"):
        exe(_f32(3, 4), _f32(5, 4))


def test_constraint():
    b, = export.symbolic_shape("b", constraints=["b >= 2"])
    fn = lambda x: x.sum(0) / x.shape[0]
    exe = _compile(fn, S((b, 3), jnp.float32))
    _check(exe, fn, _f32(2, 3))
    _check(exe, fn, _f32(7, 3))
    with pytest.raises(ValueError, match=r"symbolic shape constraint b >= 2.*"
                                         r"Expected 'b - 2' to be greater or equal to 0, "
                                         r"but found -1"):
        exe(_f32(1, 3))


def test_two_dimension_variables():
    fn = lambda x, y: x @ y
    b, k, n = export.symbolic_shape("b, k, n")
    exe = _compile(fn, S((b, k), jnp.float32), S((k, n), jnp.float32))
    _check(exe, fn, _f32(2, 5), _f32(5, 3))
    _check(exe, fn, _f32(4, 1), _f32(1, 6))
    with pytest.raises(ValueError, match="'k'"):
        exe(_f32(2, 5), _f32(4, 3))
