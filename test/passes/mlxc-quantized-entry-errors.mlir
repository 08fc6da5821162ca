// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-select-entry,mlxc-quantized-entry)'

// Unsigned storage would be legalized as signed: refused at the op that makes it.
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{quantized type tensor<4x!quant.uniform<u8:f32, 5.000000e-01:10>> has unsigned storage}}
  %0 = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x!quant.uniform<u8:f32, 0.5:10>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<4x!quant.uniform<u8:f32, 0.5:10>>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
