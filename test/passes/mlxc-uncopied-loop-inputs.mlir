// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-uncopied-loop-inputs)' | FileCheck %s

// A scan's initial state, only read by the loop (a view, a linalg input, a transfer
// read): the loop starts from the input, and the copy and its buffer are gone.
// CHECK-LABEL: func.func @reads_only
// CHECK-NOT: memref.alloc() : memref<4x8xf32>
// CHECK-NOT: memref.copy
// CHECK: scf.for %{{.*}} = %c0 to %c5 step %c1 iter_args(%[[H:.*]] = %arg0) -> (memref<4x8xf32>)
func.func @reads_only(%h0: memref<4x8xf32>) -> memref<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %f = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x8xf32>
  memref.copy %h0, %a : memref<4x8xf32> to memref<4x8xf32>
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%h = %a) -> (memref<4x8xf32>) {
    %n = memref.alloc() : memref<4x8xf32>
    %row = memref.subview %h[1, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: 8>>
    %v = vector.transfer_read %row[%c0], %f : memref<8xf32, strided<[1], offset: 8>>, vector<8xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%h : memref<4x8xf32>) outs(%n : memref<4x8xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.addf %x, %x : f32
      linalg.yield %y : f32
    }
    vector.transfer_write %v, %n[%c0, %c0] : vector<8xf32>, memref<4x8xf32>
    scf.yield %n : memref<4x8xf32>
  }
  return %r : memref<4x8xf32>
}

// -----

// The loop writes its state in place: the copy stays (the input is read-only).
// CHECK-LABEL: func.func @writes_state
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK: memref.copy %arg0, %[[A]]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[A]])
func.func @writes_state(%h0: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %a = memref.alloc() : memref<4xf32>
  memref.copy %h0, %a : memref<4xf32> to memref<4xf32>
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%h = %a) -> (memref<4xf32>) {
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%h : memref<4xf32>) {
    ^bb0(%o: f32):
      %y = arith.addf %o, %o : f32
      linalg.yield %y : f32
    }
    scf.yield %h : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// A loop that may not run (bounds not constant, or an empty range) would hand back
// the input itself; a state written through a view; a state yielded as it is: all
// keep their copies.
// CHECK-LABEL: func.func @kept
// CHECK: memref.copy %arg0, %[[A:.*]] :
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[A]])
// CHECK: memref.copy %arg0, %[[B:.*]] :
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[B]])
// CHECK: memref.copy %arg0, %[[C:.*]] :
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[C]])
// CHECK: memref.copy %arg0, %[[D:.*]] :
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[D]])
func.func @kept(%h0: memref<4xf32>, %n: index) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %f = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  memref.copy %h0, %a : memref<4xf32> to memref<4xf32>
  %r0 = scf.for %i = %c0 to %n step %c1 iter_args(%h = %a) -> (memref<4xf32>) {
    %m = memref.alloc() : memref<4xf32>
    memref.copy %h, %m : memref<4xf32> to memref<4xf32>
    scf.yield %m : memref<4xf32>
  }
  %b = memref.alloc() : memref<4xf32>
  memref.copy %h0, %b : memref<4xf32> to memref<4xf32>
  %r1 = scf.for %i = %c5 to %c5 step %c1 iter_args(%h = %b) -> (memref<4xf32>) {
    %m = memref.alloc() : memref<4xf32>
    memref.copy %h, %m : memref<4xf32> to memref<4xf32>
    scf.yield %m : memref<4xf32>
  }
  %c = memref.alloc() : memref<4xf32>
  memref.copy %h0, %c : memref<4xf32> to memref<4xf32>
  %r2 = scf.for %i = %c0 to %c5 step %c1 iter_args(%h = %c) -> (memref<4xf32>) {
    %v = memref.subview %h[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
    memref.store %f, %v[%c0] : memref<2xf32, strided<[1], offset: 1>>
    %m = memref.alloc() : memref<4xf32>
    scf.yield %m : memref<4xf32>
  }
  %d = memref.alloc() : memref<4xf32>
  memref.copy %h0, %d : memref<4xf32> to memref<4xf32>
  %r3 = scf.for %i = %c0 to %c5 step %c1 iter_args(%h = %d) -> (memref<4xf32>) {
    scf.yield %h : memref<4xf32>
  }
  return %r0, %r1, %r2, %r3 : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>
}
