// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// The pass applies the registered lowering of each op it knows (one lit test per
// op family lives in test/lowerings/) and leaves every other op as it is.
// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]] = stablehlo.reduce
// CHECK-SAME: applies stablehlo.add
// CHECK: %[[C:.*]] = stablehlo.custom_call @keep(%[[R]])
// CHECK-NEXT: return %[[C]]
func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %1 = stablehlo.optimization_barrier %0 : tensor<f32>
  %2 = stablehlo.custom_call @keep(%1) : (tensor<f32>) -> tensor<f32>
  return %2 : tensor<f32>
}
