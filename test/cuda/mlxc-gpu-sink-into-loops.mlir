// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-gpu-sink-into-loops)' | FileCheck %s

// dynamic_slice: the start index is loaded from a device array and clamped, and the
// view built from it; all of it (constants too) is cloned into the loop, which then
// takes whole buffers only.
// CHECK-LABEL: func.func @main
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK: %[[S:.*]] = memref.load %arg1[]
// CHECK-NEXT: arith.index_cast %[[S]]
// CHECK-NEXT: arith.maxsi
// CHECK-NEXT: %[[K:.*]] = arith.minsi
// CHECK-NEXT: %[[V:.*]] = memref.subview %arg0[%[[K]], 2] [3, 4] [1, 1]
// CHECK-NEXT: memref.load %[[V]][%[[I]], %[[J]]]
func.func @main(%x: memref<8x8xf32>, %i: memref<i32>, %y: memref<3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %s = memref.load %i[] : memref<i32>
  %k0 = arith.index_cast %s : i32 to index
  %k1 = arith.maxsi %k0, %c0 : index
  %k = arith.minsi %k1, %c5 : index
  %v = memref.subview %x[%k, 2] [3, 4] [1, 1] : memref<8x8xf32> to memref<3x4xf32, strided<[8, 1], offset: ?>>
  scf.parallel (%a, %b) = (%c0, %c0) to (%c3, %c4) step (%c1, %c1) {
    %e = memref.load %v[%a, %b] : memref<3x4xf32, strided<[8, 1], offset: ?>>
    memref.store %e, %y[%a, %b] : memref<3x4xf32>
  }
  return
}

// -----

// Moving a read past a kernel that writes the same buffer would change the result.
func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{the cuda target cannot move this read into the kernel that uses it: a kernel in between writes the same buffer}}
  %first = memref.load %t[%c0] : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %e = memref.load %x[%i] : memref<4xf32>
    memref.store %e, %t[%i] : memref<4xf32>
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %first, %y[%i] : memref<4xf32>
  }
  memref.dealloc %t : memref<4xf32>
  return
}
