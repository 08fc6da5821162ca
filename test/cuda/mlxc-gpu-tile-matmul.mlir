// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-gpu-tile-matmul)' | FileCheck %s

// A 40x50 * 50x30 matmul: 2x3 blocks of 16x16 threads walk K in 4 steps of 16
// through two 16x16 shared-memory tiles, loading zeros past the edges.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[GX:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[GY:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[T:.*]] = arith.constant 16 : index
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %[[BY:[a-z0-9_]+]], %{{.*}}) in (%{{.*}} = %[[GX]], %{{.*}} = %[[GY]], %{{.*}} = %{{.*}}) threads(%[[TX:[a-z0-9_]+]], %[[TY:[a-z0-9_]+]], %{{.*}}) in (%{{.*}} = %[[T]], %{{.*}} = %[[T]], %{{.*}} = %{{.*}}) workgroup(%[[AS:[a-z0-9_]+]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[BS:[a-z0-9_]+]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: memref.load %arg0[
// CHECK: memref.store %{{.*}}, %[[AS]][%[[TY]], %[[TX]]]
// CHECK: memref.load %arg1[
// CHECK: memref.store %{{.*}}, %[[BS]][%[[TY]], %[[TX]]]
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load %[[AS]][%[[TY]], %{{.*}}]
// CHECK: memref.load %[[BS]][%{{.*}}, %[[TX]]]
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
// CHECK: memref.load %arg0{{\[}}%[[BZ]],
// CHECK: memref.load %arg1{{\[}}%[[BZ]],
// CHECK: memref.store %{{.*}}, %arg2{{\[}}%[[BZ]],
func.func @batched(%a: memref<3x5x7xf32>, %b: memref<3x7x2xf32>, %c: memref<3x5x2xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x5x7xf32>, memref<3x7x2xf32>) outs(%c : memref<3x5x2xf32>)
  return
}

// -----

// Integer matmuls, transposed operands and views keep the generic path.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: gpu.launch
// CHECK-COUNT-3: linalg.matmul
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @kept(%a: memref<4x8xi32>, %b: memref<8x5xi32>, %c: memref<4x5xi32>,
                %x: memref<4x8xf32>, %y: memref<5x8xf32>, %z: memref<4x5xf32>, %big: memref<8x8xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x5xi32>) outs(%c : memref<4x5xi32>)
  linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %y : memref<4x8xf32>, memref<5x8xf32>) outs(%z : memref<4x5xf32>)
  %v = memref.subview %big[0, 0] [8, 5] [1, 1] : memref<8x8xf32> to memref<8x5xf32, strided<[8, 1]>>
  linalg.matmul ins(%x, %v : memref<4x8xf32>, memref<8x5xf32, strided<[8, 1]>>) outs(%z : memref<4x5xf32>)
  return
}
