// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-select-entry,mlxc-quantized-entry)' | FileCheck %s

// The entry's quantized types are kept on the module (the legalization that
// follows rewrites them to i8); the program itself is unchanged.
// CHECK: module attributes {{{.*}}mlxc.quantized_entry = (tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>, tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32:0, {1.000000e-01:-30,2.000000e-01:-20,3.000000e-01,4.000000e-01:1}>>}
// CHECK: stablehlo.uniform_quantize %arg1
func.func @main(%a: tensor<4x!quant.uniform<i8:f32, 0.5:-3>>, %b: tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32:0, {0.1:-30,0.2:-20,0.3:0,0.4:1}>> {
  %0 = stablehlo.uniform_quantize %b : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32:0, {0.1:-30,0.2:-20,0.3:0,0.4:1}>>
  return %0 : tensor<4x!quant.uniform<i8:f32:0, {0.1:-30,0.2:-20,0.3:0,0.4:1}>>
}

// -----

// Quantized types inside the program only: nothing to keep.
// CHECK-LABEL: module attributes {mlxc.entry = "main"} {
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.5:-3>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<4x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

