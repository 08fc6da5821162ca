// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-library-matmuls)' --split-input-file | FileCheck %s

// A product whose output a zero fill writes just before: one overwriting call
// (accumulate = 0), the fill gone. Each operand goes as its aligned pointer plus offset
// times 4 bytes, with a stride per loop (batch, rows, columns).
// CHECK-LABEL: func.func @plain
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[B:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[M:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[N:.*]] = arith.constant 96 : index
// CHECK-DAG: %[[K:.*]] = arith.constant 512 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant {{[0-9]+}} : i32
// CHECK: call @mlxc_sgemm(%[[B]], %[[M]], %[[N]], %[[K]], {{.*}}, %[[THREADS]], %[[ZERO]])
// CHECK: func.func private @mlxc_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, i32, i32)
func.func @plain(%a: memref<256x512xf32>, %b: memref<512x96xf32>, %c: memref<256x96xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<256x96xf32>)
  linalg.matmul ins(%a, %b : memref<256x512xf32>, memref<512x96xf32>) outs(%c : memref<256x96xf32>)
  return
}

// -----

// Accumulating into a computed output (no fill before it): accumulate = 1. A
// transposed left operand (x^T @ dy) is read through its strides, no copy.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: linalg.generic
// CHECK: %[[S:strides[_0-9]*]]:2 = memref.extract_strided_metadata %arg0 :
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[M:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[N:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[K:.*]] = arith.constant 64 : index
// CHECK: call @mlxc_sgemm(%{{.*}}, %[[M]], %[[N]], %[[K]], %{{.*}}, %{{.*}}, %[[S]]#1, %[[S]]#0, {{.*}}, %[[ONE]])
#x = affine_map<(m, n, k) -> (k, m)>
#dy = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @transposed(%x: memref<64x256xf32>, %dy: memref<64x128xf32>, %g: memref<256x128xf32>) {
  linalg.generic {indexing_maps = [#x, #dy, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<64x256xf32>, memref<64x128xf32>) outs(%g : memref<256x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left alone: something fused into the product (a bias), f64, and a matrix-vector
// product (fewer rows than the 6-row register tile).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: mlxc_sgemm
// CHECK: linalg.generic
// CHECK: linalg.matmul ins(%arg3, %arg4 : memref<256x64xf64>
// CHECK: linalg.matmul ins(%arg6, %arg7 : memref<1x256xf32>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @kept(%x: memref<256x64xf32>, %w: memref<64x64xf32>, %o: memref<256x64xf32>,
                %x2: memref<256x64xf64>, %w2: memref<64x64xf64>, %o2: memref<256x64xf64>,
                %v: memref<1x256xf32>, %w3: memref<256x64xf32>, %o3: memref<1x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<256x64xf32>, memref<64x64xf32>) outs(%o : memref<256x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %one = arith.constant 1.0 : f32
    %q = arith.addf %p, %one : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%x2, %w2 : memref<256x64xf64>, memref<64x64xf64>) outs(%o2 : memref<256x64xf64>)
  linalg.matmul ins(%v, %w3 : memref<1x256xf32>, memref<256x64xf32>) outs(%o3 : memref<1x64xf32>)
  return
}
