// RUN: mlxc-opt %s --pass-pipeline='builtin.module(stablehlo-refine-arguments{types=tensor<i64>,tensor<3x4xf32>},mlxc-specialize-arguments{values=0:3},stablehlo-refine-shapes,func.func(stablehlo-canonicalize-dynamism))' | FileCheck %s

// A JAX shape-polymorphic program: %arg0 is the size of the `?` dimension. With the
// argument types refined and the size a constant, every shape becomes static.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%arg0: tensor<i64>, %arg1: tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NOT: ?x
func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = stablehlo.constant dense<2> : tensor<1xi32>
  %1 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %3 = stablehlo.constant dense<4> : tensor<1xi32>
  %4 = stablehlo.concatenate %0, %2, %3, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %5 = stablehlo.dynamic_broadcast_in_dim %arg1, %4, dims = [1, 2] : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<2x?x4xf32>
  return %5 : tensor<2x?x4xf32>
}

