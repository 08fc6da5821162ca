// RUN: mlxc-opt %s --mlxc-pipeline=cpu --mlxc-stop-after=lower | FileCheck %s

// Lowering: linalg ops become branch-based loops over memrefs; subviews become
// reinterpret_casts (expand-strided-metadata); no linalg, scf or affine remains. The
// f32 exp is expanded inline (mlxc-approximate-math): a floor and 2^n built from bits.
// CHECK: mlxc.stage = "lower"
// CHECK-LABEL: func.func public @main
// CHECK: memref.reinterpret_cast
// CHECK: cf.br ^bb1
// CHECK: ^bb1(%[[IV:.*]]: index):
// CHECK: cf.cond_br
// CHECK: memref.load
// CHECK-NOT: math.exp
// CHECK: math.floor
// CHECK: arith.bitcast
// CHECK: memref.store
// CHECK-NOT: linalg.
// CHECK-NOT: scf.
// CHECK-NOT: affine.

// Input: the bufferize-stage IR of test/stages/bufferize.mlir.
#map = affine_map<(d0) -> (d0)>
module attributes {mlxc.entry = "main", mlxc.stage = "bufferize"} {
  memref.global "private" constant @__constant_1xf32 : memref<1xf32> = dense<1.000000e+00> {alignment = 64 : i64}
  func.func public @main(%arg0: memref<8xf32>, %arg1: memref<i32>, %arg2: memref<8xf32>, %arg3: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : index
    %0 = memref.get_global @__constant_1xf32 : memref<1xf32>
    %1 = memref.load %arg1[] : memref<i32>
    %2 = arith.index_cast %1 : i32 to index
    %3 = arith.maxsi %2, %c0 : index
    %4 = arith.minsi %3, %c7 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
    memref.copy %arg0, %alloc : memref<8xf32> to memref<8xf32>
    %subview = memref.subview %alloc[%4] [1] [1] : memref<8xf32> to memref<1xf32, strided<[1], offset: ?>>
    memref.copy %0, %subview : memref<1xf32> to memref<1xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%alloc : memref<8xf32>) outs(%arg2 : memref<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = math.exp %in : f32
      linalg.yield %5 : f32
    }
    memref.copy %arg0, %arg3 : memref<8xf32> to memref<8xf32>
    memref.dealloc %alloc : memref<8xf32>
    return
  }
}
