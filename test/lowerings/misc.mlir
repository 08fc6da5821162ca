// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// An optimization barrier (jax.checkpoint, lax.optimization_barrier) is the identity.
// CHECK-LABEL: func.func @barrier
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<i32>)
// CHECK-NOT: optimization_barrier
// CHECK: %[[A:.*]] = stablehlo.add %[[X]], %[[X]]
// CHECK: return %[[A]], %[[Y]]
func.func @barrier(%x: tensor<4xf32>, %y: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  %0:2 = stablehlo.optimization_barrier %x, %y : tensor<4xf32>, tensor<i32>
  %1 = stablehlo.add %0#0, %0#0 : tensor<4xf32>
  return %1, %0#1 : tensor<4xf32>, tensor<i32>
}

// is_finite on a type without infinities tests the value widened to f32 (upstream's
// |x| != inf would compare with NaN there); types with infinities are left alone.
// CHECK-LABEL: func.func @is_finite
// CHECK: %[[W:.*]] = stablehlo.convert %arg0 : (tensor<3xf8E4M3FN>) -> tensor<3xf32>
// CHECK: %[[F:.*]] = stablehlo.is_finite %[[W]] : (tensor<3xf32>) -> tensor<3xi1>
// CHECK: %[[G:.*]] = stablehlo.is_finite %arg1 : (tensor<3xf8E5M2>) -> tensor<3xi1>
// CHECK: return %[[F]], %[[G]]
func.func @is_finite(%x: tensor<3xf8E4M3FN>, %y: tensor<3xf8E5M2>) -> (tensor<3xi1>, tensor<3xi1>) {
  %0 = stablehlo.is_finite %x : (tensor<3xf8E4M3FN>) -> tensor<3xi1>
  %1 = stablehlo.is_finite %y : (tensor<3xf8E5M2>) -> tensor<3xi1>
  return %0, %1 : tensor<3xi1>, tensor<3xi1>
}
