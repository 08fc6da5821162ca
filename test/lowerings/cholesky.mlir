// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// Lower: one column per scf.for step, A[:, j] minus the product with the columns
// already computed (the others are still zero), divided by the pivot's root; rows
// above the diagonal stay zero.
// CHECK-LABEL: func.func @lower
// CHECK-SAME: (%[[A:.*]]: tensor<3x3xf64>)
// CHECK-NOT: stablehlo.cholesky
// CHECK: %[[L:.*]] = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<3x3xf64>)
// CHECK: %[[COL:.*]] = stablehlo.dynamic_slice %[[A]], {{.*}} sizes = [3, 1]
// CHECK: %[[ROW:.*]] = stablehlo.dynamic_slice %[[ACC]], {{.*}} sizes = [1, 3]
// CHECK: %[[KNOWN:.*]] = stablehlo.dot_general %[[ACC]], %[[ROW]], contracting_dims = [1] x [1]
// CHECK: %[[REST:.*]] = stablehlo.subtract %[[COL]], %[[KNOWN]]
// CHECK: stablehlo.sqrt
// CHECK: stablehlo.compare GT
// CHECK: stablehlo.dynamic_update_slice %[[ACC]]
// CHECK: return %[[L]] : tensor<3x3xf64>
func.func @lower(%a: tensor<3x3xf64>) -> tensor<3x3xf64> {
  %0 = stablehlo.cholesky %a, lower = true : tensor<3x3xf64>
  return %0 : tensor<3x3xf64>
}

// -----

// Upper, complex: the lower factor of A^H (a conjugate transpose, read from A's
// upper triangle), conjugate-transposed back; the pivot's root is taken of its real
// part.
// CHECK-LABEL: func.func @upper
// CHECK: stablehlo.transpose %{{.*}}, dims = [0, 2, 1]
// CHECK: stablehlo.negate
// CHECK: scf.for
// CHECK: stablehlo.real
// CHECK: stablehlo.sqrt %{{.*}} : tensor<2x1x1xf32>
// CHECK: scf.yield
// CHECK: stablehlo.transpose %{{.*}}, dims = [0, 2, 1]
// CHECK: %[[U:.*]] = stablehlo.complex
// CHECK: return %[[U]]
func.func @upper(%a: tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xcomplex<f32>> {
  %0 = stablehlo.cholesky %a, lower = false : tensor<2x4x4xcomplex<f32>>
  return %0 : tensor<2x4x4xcomplex<f32>>
}
