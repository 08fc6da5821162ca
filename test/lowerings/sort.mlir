// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// Sorting along dimension 0 of two operands (one unsigned): both are transposed so the
// sorted dimension is last, each row's permutation is merge-sorted in one tensor of 2n
// indices, the comparator is moved into the merge loop on rank-0 views of the
// elements (right run's element as lhs: "is right < left?"), and its verdict is kept
// in a carried rank-0 buffer. Ties take the left element: the sort is stable.
// CHECK-LABEL: func.func @two_operands
// CHECK-SAME: (%[[A:.*]]: tensor<5x3xf32>, %[[B:.*]]: tensor<5x3xui32>)
// CHECK: %[[TA:.*]] = stablehlo.transpose %[[A]], dims = [1, 0] : (tensor<5x3xf32>) -> tensor<3x5xf32>
// CHECK: %[[TB:.*]] = stablehlo.transpose %[[B]], dims = [1, 0] : (tensor<5x3xui32>) -> tensor<3x5xui32>
// CHECK-NOT: stablehlo.reshape
// CHECK: %[[WORK:.*]] = tensor.empty() : tensor<10xindex>
// CHECK: %[[VERDICT:.*]] = tensor.empty() : tensor<i1>
// CHECK: %[[ROWS:.*]]:4 = scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}} = %[[WORK]], {{.*}} = %[[VERDICT]], {{.*}}, {{.*}}) -> (tensor<10xindex>, tensor<i1>, tensor<3x5xf32>, tensor<3x5xui32>)
// Identity permutation, then passes while width < 5.
// CHECK: tensor.insert
// CHECK: scf.while
// CHECK: arith.cmpi ult
// CHECK: scf.condition
// CHECK: } do {
// CHECK: scf.for
// CHECK: scf.for {{.*}} -> (index, index, tensor<10xindex>, tensor<i1>)
// CHECK: %[[L:.*]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<10xindex>
// CHECK: %[[R:.*]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<10xindex>
// CHECK: %[[RA:.*]] = tensor.extract_slice %[[TA]][%[[ROW]], %[[R]]] [1, 1] [1, 1] : tensor<3x5xf32> to tensor<f32>
// CHECK: %[[LA:.*]] = tensor.extract_slice %[[TA]][%[[ROW]], %[[L]]] [1, 1] [1, 1] : tensor<3x5xf32> to tensor<f32>
// CHECK: tensor.extract_slice %[[TB]][%[[ROW]], %[[R]]] [1, 1] [1, 1] : tensor<3x5xui32> to tensor<ui32>
// CHECK: %[[CMP:.*]] = stablehlo.compare LT, %[[RA]], %[[LA]], TOTALORDER
// CHECK: %[[V:.*]] = bufferization.materialize_in_destination %[[CMP]] in
// CHECK: %[[LESS:.*]] = tensor.extract %[[V]][] : tensor<i1>
// CHECK: arith.ori %{{.*}}, %[[LESS]] : i1
// CHECK: %[[TAKE:.*]] = arith.andi
// CHECK: arith.select %[[TAKE]], %[[R]], %[[L]] : index
// CHECK: tensor.insert
// CHECK: scf.yield {{.*}}, %[[V]] : index, index, tensor<10xindex>, tensor<i1>
// Gather each operand through the permutation.
// CHECK: scf.for {{.*}} -> (tensor<3x5xf32>, tensor<3x5xui32>)
// CHECK: tensor.extract %[[TA]][%[[ROW]], %{{.*}}] : tensor<3x5xf32>
// CHECK: tensor.extract %[[TB]][%[[ROW]], %{{.*}}] : tensor<3x5xui32>
// CHECK: %[[OA:.*]] = stablehlo.transpose %[[ROWS]]#2, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>
// CHECK: %[[OB:.*]] = stablehlo.transpose %[[ROWS]]#3, dims = [1, 0] : (tensor<3x5xui32>) -> tensor<5x3xui32>
// CHECK: return %[[OA]], %[[OB]]
// CHECK-NOT: stablehlo.sort
func.func @two_operands(%a: tensor<5x3xf32>, %b: tensor<5x3xui32>) -> (tensor<5x3xf32>, tensor<5x3xui32>) {
  %r:2 = "stablehlo.sort"(%a, %b) ({
  ^bb0(%x0: tensor<f32>, %y0: tensor<f32>, %x1: tensor<ui32>, %y1: tensor<ui32>):
    %p = stablehlo.compare LT, %x0, %y0, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<5x3xf32>, tensor<5x3xui32>) -> (tensor<5x3xf32>, tensor<5x3xui32>)
  return %r#0, %r#1 : tensor<5x3xf32>, tensor<5x3xui32>
}

// -----

// The last dimension (dimension = -1) needs no transpose: rows are a reshape away.
// CHECK-LABEL: func.func @last_dim
// CHECK-NOT: stablehlo.transpose
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2x3x4xi32>) -> tensor<6x4xi32>
// CHECK: scf.for
// CHECK: stablehlo.compare GT
// CHECK: stablehlo.reshape %{{.*}} : (tensor<6x4xi32>) -> tensor<2x3x4xi32>
// CHECK-NOT: stablehlo.transpose
func.func @last_dim(%a: tensor<2x3x4xi32>) -> tensor<2x3x4xi32> {
  %r = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %p = stablehlo.compare GT, %x, %y, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = -1 : i64} : (tensor<2x3x4xi32>) -> tensor<2x3x4xi32>
  return %r : tensor<2x3x4xi32>
}

// -----

// One element per row: nothing to order, the comparator never runs.
// CHECK-LABEL: func.func @single
// CHECK-SAME: (%[[A:.*]]: tensor<1x4xf32>)
// CHECK-NEXT: return %[[A]]
func.func @single(%a: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %p = stablehlo.compare LT, %x, %y, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}
