// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-gpu-split-reductions)' | FileCheck %s

// A max over 65536 elements: 2048 partial maxima of 32 elements each (element
// q * 2048 + s to partial s), initialised with -inf, then 2048 -> 64, then 64 -> 1
// into the output, which keeps its initial value.
// CHECK-LABEL: func.func @max_all
// CHECK: %[[P:.*]] = memref.alloc() : memref<2048xf32>
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG]] : f32) outs(%[[P]] : memref<2048xf32>)
// CHECK: %[[V:.*]] = memref.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [32, 2048]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[V]] : memref<32x2048xf32>) outs(%[[P]] : memref<2048xf32>)
// CHECK: arith.maximumf
// CHECK: %[[P2:.*]] = memref.alloc() : memref<64xf32>
// CHECK: ins(%{{.*}} : memref<32x64xf32>) outs(%[[P2]] : memref<64xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[P2]] : memref<64xf32>) outs(%arg1 : memref<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: arith.maximumf %[[OUT]], %[[IN]] : f32
// CHECK: memref.dealloc %[[P2]]
// CHECK: memref.dealloc %[[P]]
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
func.func @max_all(%x: memref<65536xf32>, %y: memref<f32>) {
  linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]}
      ins(%x : memref<65536xf32>) outs(%y : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Row sums of 4096 rows: 64 partial sums per row fill the GPU (2^18 threads), s
// varying fastest so that a warp reads neighbouring elements.
// CHECK-LABEL: func.func @rows
// CHECK: %[[P:.*]] = memref.alloc() : memref<4096x64xf32>
// CHECK: memref.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [4096, 64, 64]
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : memref<4096x64x64xf32>) outs(%[[P]] : memref<4096x64xf32>)
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%[[P]] : memref<4096x64xf32>) outs(%arg1 : memref<4096xf32>)
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m1 = affine_map<(d0, d1) -> (d0)>
func.func @rows(%x: memref<4096x4096xf32>, %y: memref<4096xf32>) {
  linalg.generic {indexing_maps = [#m2, #m1], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4096x4096xf32>) outs(%y : memref<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows enough for the GPU (65536), each still read by one thread 32 rows apart from
// its neighbours': split by a warp, so that a warp reads 32 neighbouring elements.
// CHECK-LABEL: func.func @many_rows
// CHECK: %[[P:.*]] = memref.alloc() : memref<65536x32xf32>
// CHECK: memref.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [65536, 32, 32]
// CHECK: ins(%[[P]] : memref<65536x32xf32>) outs(%arg1 : memref<65536xf32>)
#r2 = affine_map<(d0, d1) -> (d0, d1)>
#r1 = affine_map<(d0, d1) -> (d0)>
func.func @many_rows(%x: memref<65536x1024xf32>, %y: memref<65536xf32>) {
  linalg.generic {indexing_maps = [#r2, #r1], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<65536x1024xf32>) outs(%y : memref<65536xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Column sums of 4096 columns: 64 partials per column, stored [s, column] and with
// the columns varying fastest across threads, so that a warp reads 32 neighbouring
// elements of a row (element q * 64 + s of a column goes to partial s). A body that
// is not `combine(value, out)` is left alone.
// CHECK-LABEL: func.func @columns
// CHECK: %[[P:.*]] = memref.alloc() : memref<64x4096xf32>
// CHECK: %[[V:.*]] = memref.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [64, 64, 4096]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[V]] : memref<64x64x4096xf32>) outs(%[[P]] : memref<64x4096xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]] : memref<64x4096xf32>) outs(%arg1 : memref<4096xf32>)
// CHECK-LABEL: func.func @not_a_combiner
// CHECK-NOT: memref.alloc
#t2 = affine_map<(d0, d1) -> (d1, d0)>
#t1 = affine_map<(d0, d1) -> (d0)>
func.func @columns(%x: memref<4096x4096xf32>, %y: memref<4096xf32>) {
  linalg.generic {indexing_maps = [#t2, #t1], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4096x4096xf32>) outs(%y : memref<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  return
}
#id2 = affine_map<(d0) -> (d0)>
#scalar2 = affine_map<(d0) -> ()>
func.func @not_a_combiner(%x: memref<65536xf32>, %y: memref<f32>) {
  linalg.generic {indexing_maps = [#id2, #scalar2], iterator_types = ["reduction"]}
      ins(%x : memref<65536xf32>) outs(%y : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    %t = arith.mulf %s, %out : f32
    linalg.yield %t : f32
  }
  return
}
