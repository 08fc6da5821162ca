// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-finite-without-infinity)' | FileCheck %s

// Types without infinities test for NaN only; types with infinities keep is_finite.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = stablehlo.compare EQ, %arg0, %arg0 : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xi1>
// CHECK: %[[B:.*]] = stablehlo.compare EQ, %arg1, %arg1 : (tensor<f4E2M1FN>, tensor<f4E2M1FN>) -> tensor<i1>
// CHECK: %[[C:.*]] = stablehlo.is_finite %arg2 : (tensor<4xf8E5M2>) -> tensor<4xi1>
// CHECK: %[[D:.*]] = stablehlo.is_finite %arg3 : (tensor<4xbf16>) -> tensor<4xi1>
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @main(%a: tensor<4xf8E4M3FN>, %b: tensor<f4E2M1FN>, %c: tensor<4xf8E5M2>, %d: tensor<4xbf16>)
    -> (tensor<4xi1>, tensor<i1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = stablehlo.is_finite %a : (tensor<4xf8E4M3FN>) -> tensor<4xi1>
  %1 = stablehlo.is_finite %b : (tensor<f4E2M1FN>) -> tensor<i1>
  %2 = stablehlo.is_finite %c : (tensor<4xf8E5M2>) -> tensor<4xi1>
  %3 = stablehlo.is_finite %d : (tensor<4xbf16>) -> tensor<4xi1>
  return %0, %1, %2, %3 : tensor<4xi1>, tensor<i1>, tensor<4xi1>, tensor<4xi1>
}
