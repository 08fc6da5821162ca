"""The executable's call path: every kind of argument the short path for dense ndarrays
lets through or hands to the full checks, against numpy."""

import ml_dtypes
import numpy as np
import pytest

import mlxc

SCALE = """
func.func @main(%x: tensor<{shape}x{t}>, %s: tensor<{t}>) -> tensor<{shape}x{t}> {{
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<{t}>) -> tensor<{shape}x{t}>
  %0 = stablehlo.multiply %x, %b : tensor<{shape}x{t}>
  return %0 : tensor<{shape}x{t}>
}}
"""


@pytest.fixture(scope="module")
def exe():
    return mlxc.compile(SCALE.format(shape="2x3", t="f32"))


def _x():
    return np.arange(6, dtype=np.float32).reshape(2, 3)


def test_read_only_input(exe):
    # np.asarray of a JAX array, np.broadcast_to, a frozen array: no writable buffer.
    x = _x()
    x.flags.writeable = False
    np.testing.assert_array_equal(exe(x, np.float32(2)), _x() * 2)
    s = np.broadcast_to(np.float32(3), ())
    np.testing.assert_array_equal(exe(_x(), s), _x() * 3)


def test_ndarray_subclass_and_array_like(exe):
    class Tagged(np.ndarray):
        pass

    x = _x().view(Tagged)
    np.testing.assert_array_equal(exe(x, np.float32(2)), _x() * 2)

    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return _x()

    np.testing.assert_array_equal(exe(ArrayLike(), np.float32(2)), _x() * 2)


def test_equal_dtype_that_is_another_object(exe):
    # np.dtype("<f4") may be a different object from the signature's dtype: still accepted.
    x = _x().view(np.dtype("<f4").newbyteorder("="))
    np.testing.assert_array_equal(exe(x, np.float32(2)), _x() * 2)


def test_wrong_arguments_still_raise(exe):
    with pytest.raises(TypeError, match=r"argument 0 \('arg0'\): expected f32\[2,3\], got f64"):
        exe(_x().astype(np.float64), np.float32(2))
    with pytest.raises(ValueError, match=r"argument 0 \('arg0'\): expected shape \(2, 3\)"):
        exe(_x().T, np.float32(2))
    with pytest.raises(TypeError, match=r"main\(\) takes 2 arguments"):
        exe(_x())


def test_inputs_untouched_and_outputs_fresh(exe):
    x, s = _x(), np.float32(2)
    a, b = exe(x, s), exe(x, s)
    np.testing.assert_array_equal(x, _x())
    assert not np.shares_memory(a, b) and not np.shares_memory(a, x)
    assert a.flags.owndata and a.flags.writeable and a.base is None


def test_dtype_without_buffer_protocol():
    # ml_dtypes' types export no buffer: their addresses come from another route.
    exe = mlxc.compile(SCALE.format(shape="2x3", t="bf16"))
    x = np.arange(6).reshape(2, 3).astype(ml_dtypes.bfloat16)
    out = exe(x, ml_dtypes.bfloat16(2))
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out.astype(np.float32), np.arange(6).reshape(2, 3) * 2)


def test_zero_size():
    exe = mlxc.compile(SCALE.format(shape="0x3", t="f32"))
    out = exe(np.zeros((0, 3), np.float32), np.float32(2))
    assert out.shape == (0, 3) and out.dtype == np.float32

