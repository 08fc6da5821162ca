// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-gpu-tile-matmul)' | FileCheck %s

// A 40x50 * 50x30 matmul: one block of 16x16 threads, each computing 4x4 outputs of a
// 64x64 tile in registers (16 loop results), walking K in 4 steps of 16 through two
// 16x64 shared-memory tiles, loading zeros past the edges. A is read along k (its
// contiguous dimension) by threadIdx.x, B along n.
// CHECK-LABEL: func.func @matmul
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %[[BY:[a-z0-9_]+]], %{{.*}}) in ({{.*}}) threads(%[[TX:[a-z0-9_]+]], %[[TY:[a-z0-9_]+]], %{{.*}}) in ({{.*}}) workgroup(%[[AS:[a-z0-9_]+]] : memref<16x64xf32, #gpu.address_space<workgroup>>, %[[BS:[a-z0-9_]+]] : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK: %{{.*}}:16 = scf.for
// CHECK: %[[K:.*]] = arith.addi %{{.*}}, %[[TX]] : index
// CHECK: memref.load %arg0[%{{.*}}, %[[K]]] : memref<40x50xf32>
// CHECK: memref.store %{{.*}}, %[[AS]][%[[TX]], %[[TY]]]
// CHECK: memref.load %arg1[
// CHECK: memref.store %{{.*}}, %[[BS]][%[[TY]], %[[TX]]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load %[[AS]][%{{.*}}, %[[TY]]]
// CHECK: memref.load %[[BS]][%{{.*}}, %[[TX]]]
// CHECK-COUNT-16: arith.addf
// CHECK: gpu.barrier
// CHECK: memref.load %arg2[
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %arg2[
// CHECK: gpu.terminator
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<40x50xf32>, %b: memref<50x30xf32>, %c: memref<40x30xf32>) {
  linalg.matmul ins(%a, %b : memref<40x50xf32>, memref<50x30xf32>) outs(%c : memref<40x30xf32>)
  return
}

// -----

// Batched: the batch is the grid's z dimension and the first index of every access.
// CHECK-LABEL: func.func @batched
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[BZ:[a-z0-9_]+]]) in
// CHECK: %[[B:.*]] = arith.remui %[[BZ]], %{{.*}} : index
// CHECK: memref.load %arg0{{\[}}%[[B]],
// CHECK: memref.load %arg1{{\[}}%[[B]],
// CHECK: memref.store %{{.*}}, %arg2{{\[}}%[[B]],
func.func @batched(%a: memref<3x5x7xf32>, %b: memref<3x7x2xf32>, %c: memref<3x5x2xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x5x7xf32>, memref<3x7x2xf32>) outs(%c : memref<3x5x2xf32>)
  return
}

// -----

// A transposed B (n, k) is read along k, its contiguous dimension, by threadIdx.x.
// CHECK-LABEL: func.func @transposed_b
// CHECK: gpu.launch {{.*}} threads(%[[TX:[a-z0-9_]+]], %[[TY:[a-z0-9_]+]], %{{.*}}) in ({{.*}}) workgroup(%{{.*}}, %[[BS:[a-z0-9_]+]] :
// CHECK: memref.load %arg1[%{{.*}}, %{{.*}}] : memref<5x8xf32>
// CHECK: memref.store %{{.*}}, %[[BS]][%[[TX]], %[[TY]]]
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @transposed_b(%x: memref<4x8xf32>, %y: memref<5x8xf32>, %z: memref<4x5xf32>) {
  linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %y : memref<4x8xf32>, memref<5x8xf32>) outs(%z : memref<4x5xf32>)
  return
}

// -----

// A dot_general of a 3-D and a 2-D operand (a dense layer on [batch, seq, d]) is a
// linalg.generic contraction: tiled too, with 8x8 outputs per thread (128x128 tiles)
// since 16 x 2 x 6 blocks of that size fill the GPU; bf16 operands extended on load.
// CHECK-LABEL: func.func @dense_layer
// CHECK: workgroup(%{{.*}} : memref<16x128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x128xf32, #gpu.address_space<workgroup>>)
// CHECK: %{{.*}}:64 = scf.for
// CHECK: %[[V:.*]] = memref.load %arg0[{{.*}}] : memref<16x256x256xbf16>
// CHECK-NEXT: arith.extf %[[V]] : bf16 to f32
// CHECK-NOT: linalg.generic
#x = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (k, n)>
#y = affine_map<(b, t, n, k) -> (b, t, n)>
func.func @dense_layer(%x: memref<16x256x256xbf16>, %w: memref<256x768xbf16>, %y: memref<16x256x768xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<16x256x256xbf16>, memref<256x768xbf16>) outs(%y : memref<16x256x768xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Integer matmuls, views, bodies other than a multiply-add and two contracted
// dimensions keep the generic path.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: gpu.launch
// CHECK-COUNT-2: linalg.matmul
// CHECK-COUNT-2: linalg.generic
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#a2 = affine_map<(m, n, k, l) -> (m, k, l)>
#b2 = affine_map<(m, n, k, l) -> (k, l, n)>
#c2 = affine_map<(m, n, k, l) -> (m, n)>
func.func @kept(%a: memref<4x8xi32>, %b: memref<8x5xi32>, %c: memref<4x5xi32>,
                %x: memref<4x8xf32>, %y: memref<8x5xf32>, %z: memref<4x5xf32>, %big: memref<8x8xf32>,
                %x2: memref<4x8x3xf32>, %y2: memref<8x3x5xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x5xi32>) outs(%c : memref<4x5xi32>)
  %v = memref.subview %big[0, 0] [8, 5] [1, 1] : memref<8x8xf32> to memref<8x5xf32, strided<[8, 1]>>
  linalg.matmul ins(%x, %v : memref<4x8xf32>, memref<8x5xf32, strided<[8, 1]>>) outs(%z : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<4x8xf32>, memref<8x5xf32>) outs(%z : memref<4x5xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %s = arith.addf %p, %q : f32
    %m = arith.maximumf %acc, %s : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x2, %y2 : memref<4x8x3xf32>, memref<8x3x5xf32>) outs(%z : memref<4x5xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
