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
