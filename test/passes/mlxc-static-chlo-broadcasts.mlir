// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-static-chlo-broadcasts)' | FileCheck %s

// Per-axis quantization along axis 0 (what stablehlo-legalize-quant-to-math emits):
// the vector is broadcast explicitly along the mapped dimension, the op keeps its
// name and loses broadcast_dimensions.
// CHECK-LABEL: func.func @leading_axis
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<2xi32>) -> tensor<2x3xi32>
// CHECK: %[[S:.*]] = chlo.broadcast_subtract %arg0, %[[B]] : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK: return %[[S]]
func.func @leading_axis(%x: tensor<2x3xi32>, %zp: tensor<2xi32>) -> tensor<2x3xi32> {
  %0 = chlo.broadcast_subtract %x, %zp {broadcast_dimensions = array<i64: 0>} : (tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// The lower-rank operand may come first; attributes other than the mapping stay.
// CHECK-LABEL: func.func @lhs_and_compare
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: chlo.broadcast_compare %[[B]], %arg1 {comparison_direction = #chlo<comparison_direction LT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
func.func @lhs_and_compare(%v: tensor<3xf32>, %x: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %0 = chlo.broadcast_compare %v, %x {broadcast_dimensions = array<i64: 1>, comparison_direction = #chlo<comparison_direction LT>} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Without broadcast_dimensions, or with a dynamic shape, nothing changes.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: broadcast_in_dim
// CHECK: chlo.broadcast_add %arg0, %arg1 : (tensor<2x3xf32>, tensor<f32>)
// CHECK: chlo.broadcast_multiply %arg2, %arg3 {broadcast_dimensions = array<i64: 0>}
func.func @untouched(%x: tensor<2x3xf32>, %s: tensor<f32>, %d: tensor<?x3xf32>, %v: tensor<?xf32>) -> (tensor<2x3xf32>, tensor<?x3xf32>) {
  %0 = chlo.broadcast_add %x, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %1 = chlo.broadcast_multiply %d, %v {broadcast_dimensions = array<i64: 0>} : (tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<?x3xf32>
}
