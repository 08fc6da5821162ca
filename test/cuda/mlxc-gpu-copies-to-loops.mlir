// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-gpu-copies-to-loops)' | FileCheck %s

// A copy out of a strided view becomes one load and one store per element.
// CHECK-LABEL: func.func @view
// CHECK: %[[V:.*]] = memref.subview
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%c3, %c4) step (%c1, %c1)
// CHECK-NEXT: %[[E:.*]] = memref.load %[[V]][%[[I]], %[[J]]]
// CHECK-NEXT: memref.store %[[E]], %arg1[%[[I]], %[[J]]]
// CHECK-NOT: memref.copy
func.func @view(%x: memref<8x8xf32>, %y: memref<3x4xf32>) {
  %v = memref.subview %x[2, 1] [3, 4] [1, 2] : memref<8x8xf32> to memref<3x4xf32, strided<[8, 2], offset: 17>>
  memref.copy %v, %y : memref<3x4xf32, strided<[8, 2], offset: 17>> to memref<3x4xf32>
  return
}

// A rank-0 copy needs no loop.
// CHECK-LABEL: func.func @scalar
// CHECK-NEXT: %[[E:.*]] = memref.load %arg0[] : memref<i32>
// CHECK-NEXT: memref.store %[[E]], %arg1[] : memref<i32>
// CHECK-NEXT: return
func.func @scalar(%x: memref<i32>, %y: memref<i32>) {
  memref.copy %x, %y : memref<i32> to memref<i32>
  return
}
