// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-gpu-wrap-sequential)' | FileCheck %s

// A whole-array reduction (a bare scf.for) and a scalar store go into one-iteration
// parallel loops; buffers, constants and existing parallel loops stay where they are.
// CHECK-LABEL: func.func @main
// CHECK: %[[T:.*]] = memref.alloc() : memref<f32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK-NEXT: memref.store %{{.*}}, %[[T]][]
// CHECK: scf.parallel (%{{.*}}) = (%[[Z:.*]]) to (%[[O:.*]]) step (%[[O]])
// CHECK-NEXT: scf.for
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1)
// CHECK: memref.dealloc %[[T]]
func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<f32>
  memref.store %zero, %t[] : memref<f32>
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %x[%i] : memref<8xf32>
    %s = memref.load %t[] : memref<f32>
    %n = arith.addf %a, %s : f32
    memref.store %n, %t[] : memref<f32>
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %s = memref.load %t[] : memref<f32>
    memref.store %s, %y[%i] : memref<8xf32>
  }
  memref.dealloc %t : memref<f32>
  return
}
