"""Float formats: reduce_precision and arithmetic on the small (fp8/fp6/fp4) types,
against numpy and ml_dtypes."""

import numpy as np
import pytest

import mlxc


@pytest.mark.parametrize("dtype,name", [(np.float32, "f32"), (np.float64, "f64")])
def test_reduce_precision_without_mantissa_sends_nan_to_infinity(dtype, name):
    exe = mlxc.compile(f"""
    func.func @main(%x: tensor<6x{name}>) -> (tensor<6x{name}>, tensor<6x{name}>) {{
      %0 = stablehlo.reduce_precision %x, format = e5m0 : tensor<6x{name}>
      %1 = stablehlo.reduce_precision %x, format = e5m2 : tensor<6x{name}>
      return %0, %1 : tensor<6x{name}>, tensor<6x{name}>
    }}""")
    x = np.array([np.nan, -np.nan, 3.5, -0.8, np.inf, 1e6], dtype)
    no_mantissa, e5m2 = exe(x)
    np.testing.assert_array_equal(no_mantissa, np.array([np.inf, -np.inf, 4.0, -1.0, np.inf, np.inf],
                                                        dtype))
    assert np.isnan(e5m2[:2]).all()  # formats with a mantissa keep NaN
