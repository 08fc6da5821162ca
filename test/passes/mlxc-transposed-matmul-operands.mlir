// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-transposed-matmul-operands)' | FileCheck %s

// A weight gradient x^T @ dy: the matmul reads x through its indexing map, no transpose.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @generic_transpose(
// CHECK-SAME: %[[X:.*]]: tensor<128x256xf32>, %[[DY:.*]]: tensor<128x512xf32>
// CHECK-NOT: linalg.matmul
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[DY]] : tensor<128x256xf32>, tensor<128x512xf32>) outs(%{{.*}} : tensor<256x512xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[W:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[IN]], %[[W]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @generic_transpose(%x: tensor<128x256xf32>, %dy: tensor<128x512xf32>) -> tensor<256x512xf32> {
  %e = tensor.empty() : tensor<256x128xf32>
  %xt = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<128x256xf32>) outs(%e : tensor<256x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<256x128xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<256x512xf32>
  %c = linalg.fill ins(%z : f32) outs(%e2 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.matmul ins(%xt, %dy : tensor<256x128xf32>, tensor<128x512xf32>) outs(%c : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}

// -----

// linalg.transpose, in f64.
// CHECK-LABEL: func.func @named_transpose(
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8xf64>, tensor<4x16xf64>)
func.func @named_transpose(%x: tensor<4x8xf64>, %y: tensor<4x16xf64>, %c: tensor<8x16xf64>) -> tensor<8x16xf64> {
  %e = tensor.empty() : tensor<8x4xf64>
  %xt = linalg.transpose ins(%x : tensor<4x8xf64>) outs(%e : tensor<8x4xf64>) permutation = [1, 0]
  %r = linalg.matmul ins(%xt, %y : tensor<8x4xf64>, tensor<4x16xf64>) outs(%c : tensor<8x16xf64>) -> tensor<8x16xf64>
  return %r : tensor<8x16xf64>
}

// -----

// Left alone: a transpose with another user (its copy stays anyway), a transposed right
// operand (its rows are the vector loads), an integer matmul.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT: linalg.matmul
#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @kept(%x: tensor<4x8xf32>, %c: tensor<8x8xf32>, %c2: tensor<4x4xf32>, %i: tensor<4x4xi32>, %ci: tensor<4x4xi32>) -> (tensor<8x8xf32>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xi32>) {
  %e = tensor.empty() : tensor<8x4xf32>
  %xt = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4xf32>
  %r = linalg.matmul ins(%xt, %x : tensor<8x4xf32>, tensor<4x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %xt2 = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e2 : tensor<8x4xf32>) permutation = [1, 0]
  %r2 = linalg.matmul ins(%x, %xt2 : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %ei = tensor.empty() : tensor<4x4xi32>
  %it = linalg.transpose ins(%i : tensor<4x4xi32>) outs(%ei : tensor<4x4xi32>) permutation = [1, 0]
  %r3 = linalg.matmul ins(%it, %i : tensor<4x4xi32>, tensor<4x4xi32>) outs(%ci : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %r, %xt, %r2, %r3 : tensor<8x8xf32>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xi32>
}
