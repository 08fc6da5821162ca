// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-gpu-contraction-operands)' | FileCheck %s

// gelu-like producer fused into a matmul: computed once per (m, k) into a temporary
// by an elementwise generic, then a plain product of two buffers.
// CHECK-LABEL: func.func @producer_fused
// CHECK: %[[T:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : memref<64x32xf32>, memref<64xf32>) outs(%[[T]] : memref<64x32xf32>)
// CHECK: math.tanh
// CHECK: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[T]], %arg2 : memref<64x32xf32>, memref<32x16xf32>) outs(%arg3 : memref<64x16xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: arith.addf %[[C]], %[[P]] : f32
// CHECK: memref.dealloc %[[T]]
#x = affine_map<(m, n, k) -> (m, k)>
#v = affine_map<(m, n, k) -> (m)>
#w = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @producer_fused(%h: memref<64x32xf32>, %s: memref<64xf32>, %w: memref<32x16xf32>, %y: memref<64x16xf32>) {
  linalg.generic {indexing_maps = [#x, #v, #w, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %s, %w : memref<64x32xf32>, memref<64xf32>, memref<32x16xf32>) outs(%y : memref<64x16xf32>) {
  ^bb0(%a: f32, %sc: f32, %b: f32, %acc: f32):
    %t = math.tanh %a : f32
    %u = arith.mulf %t, %sc : f32
    %p = arith.mulf %u, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The computed side holds the output's innermost dimension (n): it becomes the second
// operand; the plain side, extended from bf16, keeps its extf in the contraction.
// CHECK-LABEL: func.func @second_side
// CHECK: %[[T:.*]] = memref.alloc() : memref<32x16xf32>
// CHECK: linalg.generic {{.*}} outs(%[[T]] : memref<32x16xf32>)
// CHECK: arith.negf
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[T]] : memref<64x32xbf16>, memref<32x16xf32>) outs(%arg2 : memref<64x16xf32>)
// CHECK: arith.extf
// CHECK: arith.mulf
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @second_side(%h: memref<64x32xbf16>, %w: memref<32x16xf32>, %y: memref<64x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %w : memref<64x32xbf16>, memref<32x16xf32>) outs(%y : memref<64x16xf32>) {
  ^bb0(%a: bf16, %b: f32, %acc: f32):
    %e = arith.extf %a : bf16 to f32
    %nb = arith.negf %b : f32
    %p = arith.mulf %nb, %e : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Plain products, and contractions over two dimensions, are left alone.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.alloc
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#x2 = affine_map<(m, n, k, l) -> (m, k, l)>
#w2 = affine_map<(m, n, k, l) -> (k, l, n)>
#c2 = affine_map<(m, n, k, l) -> (m, n)>
func.func @kept(%h: memref<64x32xf32>, %w: memref<32x16xf32>, %y: memref<64x16xf32>,
                %h2: memref<64x4x8xf32>, %w2: memref<4x8x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %w : memref<64x32xf32>, memref<32x16xf32>) outs(%y : memref<64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x2, #w2, #c2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%h2, %w2 : memref<64x4x8xf32>, memref<4x8x16xf32>) outs(%y : memref<64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %t = math.tanh %a : f32
    %p = arith.mulf %t, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
