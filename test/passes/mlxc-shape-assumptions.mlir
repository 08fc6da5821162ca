// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-shape-assumptions)' | FileCheck %s

// torch-mlir's guarded broadcast: the assuming region's ops move out, its result is
// the yielded value, and the witness goes.
// CHECK-LABEL: func.func @main
// CHECK-NOT: shape.assuming
// CHECK-NOT: shape.cstr_broadcastable
// CHECK: %[[S:.*]] = shape.broadcast
// CHECK: %[[B:.*]] = stablehlo.dynamic_broadcast_in_dim %arg1, %[[S]]
// CHECK: %[[A:.*]] = stablehlo.add %{{.*}}, %[[B]]
// CHECK: return %[[A]]
func.func @main(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %sa = shape.shape_of %a : tensor<?x4xf32> -> tensor<2xindex>
  %sb = shape.const_shape [4] : tensor<1xindex>
  %w = shape.cstr_broadcastable %sa, %sb : tensor<2xindex>, tensor<1xindex>
  %r = shape.assuming %w -> (tensor<?x4xf32>) {
    %s = shape.broadcast %sa, %sb : tensor<2xindex>, tensor<1xindex> -> tensor<2xindex>
    %x = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [0, 1] : (tensor<?x4xf32>, tensor<2xindex>) -> tensor<?x4xf32>
    %y = stablehlo.dynamic_broadcast_in_dim %b, %s, dims = [1] : (tensor<4xf32>, tensor<2xindex>) -> tensor<?x4xf32>
    %z = stablehlo.add %x, %y : tensor<?x4xf32>
    shape.assuming_yield %z : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}
