// RUN: not mlxc-opt %s --pass-pipeline='builtin.module(mlxc-shape-assertions)' 2>&1 | FileCheck %s

// One that fails raises JAX's message with the values filled in.
// CHECK: error: Expected value >= 1 for dimension variable 'b'; 'b' = 0
func.func @fails(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %ok = stablehlo.constant dense<false> : tensor<i1>
  %b = stablehlo.constant dense<0> : tensor<i32>
  stablehlo.custom_call @shape_assertion(%ok, %b) {api_version = 2 : i32, error_message = "Expected value >= 1 for dimension variable 'b'; 'b' = {0}", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %x : tensor<0x4xf32>
}
