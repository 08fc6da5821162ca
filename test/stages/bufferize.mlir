// RUN: mlxc-opt %s --mlxc-pipeline=cpu --mlxc-stop-after=bufferize | FileCheck %s

// Bufferization: results become output buffers (%arg2, %arg3), the input that an
// in-place update would overwrite is copied first, a returned input is copied to
// its output, and temporaries are freed after their last use.
// CHECK: mlxc.stage = "bufferize"
// CHECK: memref.global "private" constant @__constant_1xf32 : memref<1xf32>
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[X:.*]]: memref<8xf32>, %[[I:.*]]: memref<i32>, %[[OUT0:.*]]: memref<8xf32>, %[[OUT1:.*]]: memref<8xf32>) {
// CHECK: %[[TMP:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK: memref.copy %[[X]], %[[TMP]]
// CHECK: %[[SUB:.*]] = memref.subview %[[TMP]]
// CHECK: memref.copy %{{.*}}, %[[SUB]]
// CHECK: linalg.generic {{.*}} ins(%[[TMP]] : memref<8xf32>) outs(%[[OUT0]] : memref<8xf32>)
// CHECK: memref.dealloc %[[TMP]]
// CHECK-NEXT: memref.copy %[[X]], %[[OUT1]]
// CHECK-NEXT: return
// CHECK-NOT: tensor<

// Input: the fuse-stage IR of
//   main(x: f32[8], i: i32) = (exp(dynamic_update_slice(x, [1.0], i)), x)
#map = affine_map<(d0) -> (d0)>
module attributes {mlxc.entry = "main", mlxc.stage = "fuse"} {
  func.func public @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %c7 = arith.constant 7 : index
    %cst = arith.constant dense<1.000000e+00> : tensor<1xf32>
    %c0 = arith.constant 0 : index
    %extracted = tensor.extract %arg1[] : tensor<i32>
    %0 = arith.index_cast %extracted : i32 to index
    %1 = arith.maxsi %0, %c0 : index
    %2 = arith.minsi %1, %c7 : index
    %inserted_slice = tensor.insert_slice %cst into %arg0[%2] [1] [1] : tensor<1xf32> into tensor<8xf32>
    %3 = tensor.empty() : tensor<8xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%inserted_slice : tensor<8xf32>) outs(%3 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = math.exp %in : f32
      linalg.yield %5 : f32
    } -> tensor<8xf32>
    return %4, %arg0 : tensor<8xf32>, tensor<8xf32>
  }
}
