// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-canonical-dot-general)' | FileCheck %s

// x @ w with x of rank 3: the leading free dimensions are adjacent, so x is reshaped
// into [M, K] and the result back: a plain matmul, no transpose.
// CHECK-LABEL: func.func @rank3_lhs
// CHECK-NOT: stablehlo.transpose
// CHECK: %[[X:.*]] = stablehlo.reshape %arg0 : (tensor<2x128x256xf32>) -> tensor<256x256xf32>
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[X]], %arg1, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[D]] : (tensor<256x64xf32>) -> tensor<2x128x64xf32>
// CHECK: return %[[R]]
func.func @rank3_lhs(%x: tensor<2x128x256xf32>, %w: tensor<256x64xf32>) -> tensor<2x128x64xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0] : (tensor<2x128x256xf32>, tensor<256x64xf32>) -> tensor<2x128x64xf32>
  return %0 : tensor<2x128x64xf32>
}

// -----

// Two batch dimensions (attention's b, h) collapse into one; the transposed rhs keeps
// its layout ([B, N, K]: each kind's dims are adjacent), which the layout pass decides.
// CHECK-LABEL: func.func @two_batch_dims
// CHECK-NOT: stablehlo.transpose
// CHECK-DAG: %[[Q:.*]] = stablehlo.reshape %arg0 : (tensor<2x4x16x8xf32>) -> tensor<8x16x8xf32>
// CHECK-DAG: %[[K:.*]] = stablehlo.reshape %arg1 : (tensor<2x4x12x8xf32>) -> tensor<8x12x8xf32>
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[Q]], %[[K]], batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<8x16x8xf32>, tensor<8x12x8xf32>) -> tensor<8x16x12xf32>
// CHECK: stablehlo.reshape %[[D]] : (tensor<8x16x12xf32>) -> tensor<2x4x16x12xf32>
func.func @two_batch_dims(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x12x8xf32>) -> tensor<2x4x16x12xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>) -> tensor<2x4x16x12xf32>
  return %0 : tensor<2x4x16x12xf32>
}

// -----

// Batch dimensions that are not adjacent ([b, q, h, d]): transposed into [b, h, q, d]
// first. The batch pairs keep their listed order, which is the result's.
// CHECK-LABEL: func.func @heads_in_the_middle
// CHECK-DAG: %[[QT:.*]] = stablehlo.transpose %arg0, dims = [0, 2, 1, 3] : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-DAG: %[[KT:.*]] = stablehlo.transpose %arg1, dims = [0, 2, 3, 1] : (tensor<2x12x4x8xf32>) -> tensor<2x4x8x12xf32>
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x16x8xf32>, tensor<8x8x12xf32>) -> tensor<8x16x12xf32>
func.func @heads_in_the_middle(%q: tensor<2x16x4x8xf32>, %k: tensor<2x12x4x8xf32>) -> tensor<2x4x16x12xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<2x16x4x8xf32>, tensor<2x12x4x8xf32>) -> tensor<2x4x16x12xf32>
  return %0 : tensor<2x4x16x12xf32>
}

// -----

// A weight gradient x^T @ g over two contracting dims (batch and sequence): both are
// adjacent in both operands, so only reshapes: [BT, D]^T x [BT, F].
// CHECK-LABEL: func.func @two_contracting_dims
// CHECK-NOT: stablehlo.transpose
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [0] x [0] : (tensor<256x32xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>
func.func @two_contracting_dims(%x: tensor<2x128x32xf32>, %g: tensor<2x128x64xf32>) -> tensor<32x64xf32> {
  %0 = stablehlo.dot_general %x, %g, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x32xf32>, tensor<2x128x64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// -----

// Already one dimension of each kind: untouched.
// CHECK-LABEL: func.func @canonical
// CHECK-NOT: stablehlo.reshape
// CHECK: stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1]
func.func @canonical(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>) -> tensor<4x8x32xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<4x8x32xf32>
  return %0 : tensor<4x8x32xf32>
}

// -----

// Attention's p @ v as einsum('bhqk,bkhd->bqhd'): the dot computes [b, h, d, q] and
// its one user transposes that to [b, q, h, d]. Swapped, it computes [b, h, q, d]
// from p as it is and v moved by whole rows ([b, k, h, d] -> [b, h, k, d]); the
// transpose back to [b, h, d, q] folds into the user's (canonicalization).
// CHECK-LABEL: func.func @swapped_for_its_user
// CHECK-DAG: %[[V:.*]] = stablehlo.transpose %arg1, dims = [0, 2, 1, 3] : (tensor<2x64x2x32xf32>) -> tensor<2x2x64x32xf32>
// CHECK-DAG: %[[P:.*]] = stablehlo.reshape %arg0 : (tensor<2x2x16x64xf32>) -> tensor<4x16x64xf32>
// CHECK-DAG: %[[VR:.*]] = stablehlo.reshape %[[V]] : (tensor<2x2x64x32xf32>) -> tensor<4x64x32xf32>
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[P]], %[[VR]], batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x16x64xf32>, tensor<4x64x32xf32>) -> tensor<4x16x32xf32>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[D]] : (tensor<4x16x32xf32>) -> tensor<2x2x16x32xf32>
// CHECK: %[[B:.*]] = stablehlo.transpose %[[R]], dims = [0, 1, 3, 2] : (tensor<2x2x16x32xf32>) -> tensor<2x2x32x16xf32>
// CHECK: stablehlo.transpose %[[B]], dims = [0, 3, 1, 2]
func.func @swapped_for_its_user(%p: tensor<2x2x16x64xf32>, %v: tensor<2x64x2x32xf32>) -> tensor<2x16x2x32xf32> {
  %0 = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3] : (tensor<2x64x2x32xf32>, tensor<2x2x16x64xf32>) -> tensor<2x2x32x16xf32>
  %1 = stablehlo.transpose %0, dims = [0, 3, 1, 2] : (tensor<2x2x32x16xf32>) -> tensor<2x16x2x32xf32>
  return %1 : tensor<2x16x2x32xf32>
}
