// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-select-entry,mlxc-quantized-entry,mlxc-signed-quantized-storage)'

// A bitcast from unsigned to signed quantized storage has no signed twin to become.
func.func @main(%a: tensor<4x!quant.uniform<u8:f32, 0.5:10>>) -> tensor<4x!quant.uniform<i8:f32, 0.5:10>> {
  // expected-error @below {{mlxc cannot bitcast between an unsigned and a signed quantized type}}
  %0 = stablehlo.bitcast_convert %a : (tensor<4x!quant.uniform<u8:f32, 0.5:10>>) -> tensor<4x!quant.uniform<i8:f32, 0.5:10>>
  return %0 : tensor<4x!quant.uniform<i8:f32, 0.5:10>>
}
