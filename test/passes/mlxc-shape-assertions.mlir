// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-shape-assertions)' | FileCheck %s

// Assertions that hold for these shapes (constant true once the shapes are static) go;
// other custom calls stay.
// CHECK-LABEL: func.func @holds
// CHECK-NOT: @shape_assertion
// CHECK: stablehlo.custom_call @other
// CHECK-NEXT: return
func.func @holds(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %ok = stablehlo.constant dense<true> : tensor<i1>
  %b = stablehlo.constant dense<3> : tensor<i32>
  stablehlo.custom_call @shape_assertion(%ok, %b) {api_version = 2 : i32, error_message = "Expected value >= 1 for dimension variable 'b'; 'b' = {0}", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  stablehlo.custom_call @shape_assertion(%ok, %b, %b) {api_version = 2 : i32, error_message = "'b' = {0} = {1}", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
  stablehlo.custom_call @other(%x) {has_side_effect = true} : (tensor<3x4xf32>) -> ()
  return %x : tensor<3x4xf32>
}
