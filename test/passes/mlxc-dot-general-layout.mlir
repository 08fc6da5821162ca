// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-dot-general-layout)' | FileCheck %s

// Attention's q.k^T contracts the last dimension of both: k is transposed to [b, d, k].
// CHECK-LABEL: func.func @batched_rhs_transposed
// CHECK: %[[KT:.*]] = stablehlo.transpose %arg1, dims = [0, 2, 1] : (tensor<4x128x64xf32>) -> tensor<4x64x128xf32>
// CHECK: %[[D:.*]] = stablehlo.dot_general %arg0, %[[KT]], batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x128x64xf32>, tensor<4x64x128xf32>) -> tensor<4x128x128xf32>
// CHECK: return %[[D]]
func.func @batched_rhs_transposed(%q: tensor<4x128x64xf32>, %k: tensor<4x128x64xf32>) -> tensor<4x128x128xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<4x128x64xf32>, tensor<4x128x64xf32>) -> tensor<4x128x128xf32>
  return %0 : tensor<4x128x128xf32>
}

// -----

// Both operands out of place, the batch dimension last in one of them.
// CHECK-LABEL: func.func @both_transposed
// CHECK-DAG: %[[A:.*]] = stablehlo.transpose %arg0, dims = [2, 1, 0] : (tensor<64x128x2xf32>) -> tensor<2x128x64xf32>
// CHECK-DAG: %[[B:.*]] = stablehlo.transpose %arg1, dims = [0, 2, 1] : (tensor<2x96x64xf32>) -> tensor<2x64x96xf32>
// CHECK: stablehlo.dot_general %[[A]], %[[B]], batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x128x64xf32>, tensor<2x64x96xf32>) -> tensor<2x128x96xf32>
func.func @both_transposed(%a: tensor<64x128x2xf32>, %b: tensor<2x96x64xf32>) -> tensor<2x128x96xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [2] x [0], contracting_dims = [0] x [2] : (tensor<64x128x2xf32>, tensor<2x96x64xf32>) -> tensor<2x128x96xf32>
  return %0 : tensor<2x128x96xf32>
}

// -----

// An lhs copied only when the product is 64 times its size: not here (n = 48).
// CHECK-LABEL: func.func @small_n
// CHECK: %[[B:.*]] = stablehlo.transpose %arg1, dims = [0, 2, 1]
// CHECK: stablehlo.dot_general %arg0, %[[B]], batching_dims = [2] x [0], contracting_dims = [0] x [1]
func.func @small_n(%a: tensor<32x64x2xf32>, %b: tensor<2x48x32xf32>) -> tensor<2x64x48xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [2] x [0], contracting_dims = [0] x [2] : (tensor<32x64x2xf32>, tensor<2x48x32xf32>) -> tensor<2x64x48xf32>
  return %0 : tensor<2x64x48xf32>
}

// -----

// JAX's gradient of x @ w: (x.T @ g).T as a dot_general and a transpose. Computing
// g.T @ x (operands swapped) copies the smaller x instead of g and the result.
// CHECK-LABEL: func.func @transposed_result
// CHECK: %[[XT:.*]] = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<128x256xf32>) -> tensor<256x128xf32>
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[XT]], %arg0, contracting_dims = [1] x [0], precision = [HIGHEST, DEFAULT] : (tensor<256x128xf32>, tensor<128x512xf32>) -> tensor<256x512xf32>
// CHECK-NOT: stablehlo.transpose
// CHECK: return %[[D]]
func.func @transposed_result(%g: tensor<128x512xf32>, %x: tensor<128x256xf32>) -> tensor<256x512xf32> {
  %0 = stablehlo.dot_general %g, %x, contracting_dims = [0] x [0], precision = [DEFAULT, HIGHEST] : (tensor<128x512xf32>, tensor<128x256xf32>) -> tensor<512x256xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<512x256xf32>) -> tensor<256x512xf32>
  return %1 : tensor<256x512xf32>
}

// -----

// Left alone: already [m, k] x [k, n]; too little work to pay for a copy; a copy as
// large as the product (one row of lhs); integer dots (never vectorized).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: stablehlo.transpose
// CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
// CHECK: stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [1]
// CHECK: stablehlo.dot_general %arg4, %arg5, contracting_dims = [1] x [1]
// CHECK: stablehlo.dot_general %arg6, %arg7, contracting_dims = [1] x [1]
func.func @untouched(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>,
                     %c: tensor<16x16xf32>, %d: tensor<16x16xf32>,
                     %e: tensor<2x512xf32>, %f: tensor<256x512xf32>,
                     %g: tensor<64x64xi32>, %h: tensor<64x64xi32>)
    -> (tensor<64x64xf32>, tensor<16x16xf32>, tensor<2x256xf32>, tensor<64x64xi32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [1] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %2 = stablehlo.dot_general %e, %f, contracting_dims = [1] x [1] : (tensor<2x512xf32>, tensor<256x512xf32>) -> tensor<2x256xf32>
  %3 = stablehlo.dot_general %g, %h, contracting_dims = [1] x [1] : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi32>
  return %0, %1, %2, %3 : tensor<64x64xf32>, tensor<16x16xf32>, tensor<2x256xf32>, tensor<64x64xi32>
}
