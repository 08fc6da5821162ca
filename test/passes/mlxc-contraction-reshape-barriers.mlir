// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-contraction-reshape-barriers,func.func(linalg-fuse-elementwise-ops))' | FileCheck %s --check-prefix=FUSED
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-contraction-reshape-barriers,func.func(linalg-fuse-elementwise-ops),mlxc-contraction-reshape-barriers{remove=1})' | FileCheck %s --check-prefix=RESTORED

// relu(x @ w1) @ w2 with x of rank 3, as mlxc-canonical-dot-general writes it. Without
// the barriers the fusion folds the reshapes into both products (rank-3 generic
// contractions) and the relu into the second one's operand.
// FUSED-LABEL: func.func @mlp
// FUSED: tensor.reshape %arg0
// FUSED: %[[M1:.*]] = linalg.matmul
// FUSED: tensor.reshape %[[M1]]
// FUSED: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// FUSED: tensor.reshape
// FUSED: linalg.matmul
// FUSED-NOT: "reduction"

// RESTORED-LABEL: func.func @mlp
// RESTORED-NOT: tensor.reshape
// RESTORED: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x128x64xf32> into tensor<256x64xf32>
// RESTORED: linalg.matmul
// RESTORED: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 128, 96]
// RESTORED: tensor.collapse_shape
// RESTORED: linalg.matmul
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @mlp(%x: tensor<2x128x64xf32>, %w1: tensor<64x96xf32>, %w2: tensor<96x32xf32>) -> tensor<256x32xf32> {
  %zero = arith.constant 0.0 : f32
  %xc = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x128x64xf32> into tensor<256x64xf32>
  %e1 = tensor.empty() : tensor<256x96xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256x96xf32>) -> tensor<256x96xf32>
  %m1 = linalg.matmul ins(%xc, %w1 : tensor<256x64xf32>, tensor<64x96xf32>) outs(%f1 : tensor<256x96xf32>) -> tensor<256x96xf32>
  %m1e = tensor.expand_shape %m1 [[0, 1], [2]] output_shape [2, 128, 96] : tensor<256x96xf32> into tensor<2x128x96xf32>
  %e2 = tensor.empty() : tensor<2x128x96xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m1e : tensor<2x128x96xf32>) outs(%e2 : tensor<2x128x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x128x96xf32>
  %rc = tensor.collapse_shape %r [[0, 1], [2]] : tensor<2x128x96xf32> into tensor<256x96xf32>
  %e3 = tensor.empty() : tensor<256x32xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<256x32xf32>) -> tensor<256x32xf32>
  %m2 = linalg.matmul ins(%rc, %w2 : tensor<256x96xf32>, tensor<96x32xf32>) outs(%f3 : tensor<256x32xf32>) -> tensor<256x32xf32>
  return %m2 : tensor<256x32xf32>
}

// -----

// Attention's p @ v as the simplify stage leaves it: p / sum(p) per head, the heads
// collapsed into one batch dimension and p transposed for the product. Unguarded, the
// fusion folded the collapse into the product (a 5-loop generic that no kernel or
// schedule takes) and then the division into its operand, run once per output column.
// Guarded, the division and transpose are computed once (the transpose as the
// division's output map) and the product stays named.
// FUSED-LABEL: func.func @computed_operand
// FUSED: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// FUSED: arith.divf
// FUSED: %[[C:.*]] = tensor.collapse_shape
// FUSED: %[[B:.*]] = tensor.reshape %[[C]]
// FUSED: linalg.batch_matmul ins(%arg1, %[[B]]
// FUSED-NOT: "reduction"
// FUSED-LABEL: func.func @moved_operand
// FUSED-NOT: tensor.reshape
// FUSED: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 :
// RESTORED-LABEL: func.func @computed_operand
// RESTORED-NOT: tensor.reshape
// RESTORED: %[[C:.*]] = tensor.collapse_shape
// RESTORED: linalg.batch_matmul ins(%arg1, %[[C]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tr3 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @computed_operand(%p: tensor<4x2x64x64xf32>, %v: tensor<8x32x64xf32>, %s: tensor<4x2x64x64xf32>) -> tensor<8x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2x64x64xf32>
  %d = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %s : tensor<4x2x64x64xf32>, tensor<4x2x64x64xf32>) outs(%e : tensor<4x2x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<4x2x64x64xf32>
  %c = tensor.collapse_shape %d [[0, 1], [2], [3]] : tensor<4x2x64x64xf32> into tensor<8x64x64xf32>
  %e1 = tensor.empty() : tensor<8x64x64xf32>
  %t = linalg.generic {indexing_maps = [#tr3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : tensor<8x64x64xf32>) outs(%e1 : tensor<8x64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x64x64xf32>
  %e2 = tensor.empty() : tensor<8x32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x32x64xf32>) -> tensor<8x32x64xf32>
  %r = linalg.batch_matmul ins(%v, %t : tensor<8x32x64xf32>, tensor<8x64x64xf32>) outs(%f : tensor<8x32x64xf32>) -> tensor<8x32x64xf32>
  return %r : tensor<8x32x64xf32>
}

// A transpose of an argument read by a generic contraction is an indexing map: fused.
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bkn = affine_map<(b, m, n, k) -> (b, k, n)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @moved_operand(%x: tensor<8x32x64xf32>, %k: tensor<8x64x64xf32>) -> tensor<8x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64x64xf32>
  %t = linalg.generic {indexing_maps = [#tr3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<8x64x64xf32>) outs(%e : tensor<8x64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x64x64xf32>
  %e2 = tensor.empty() : tensor<8x32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x32x64xf32>) -> tensor<8x32x64xf32>
  %r = linalg.generic {indexing_maps = [#bmk, #bkn, #bmn], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %t : tensor<8x32x64xf32>, tensor<8x64x64xf32>) outs(%f : tensor<8x32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x32x64xf32>
  return %r : tensor<8x32x64xf32>
}
