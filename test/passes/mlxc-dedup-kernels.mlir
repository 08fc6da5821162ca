// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-dedup-kernels{min-ops=1})' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-dedup-kernels)' | FileCheck %s --check-prefix=SMALL

// Two loop nests identical up to the buffers they use become one kernel called twice,
// with each nest's buffers; the nest that has no twin stays in the entry.
// CHECK-LABEL: func.func private @main_shared0(
// CHECK-SAME: %[[S:.*]]: memref<8xf32>, %[[D:.*]]: memref<8xf32>) attributes {mlxc.kernel, mlxc.shared_kernel}
// CHECK: scf.for
// CHECK: memref.load %[[S]]
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[D]]
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>, %[[Z:.*]]: memref<8xf32>)
// CHECK: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: call @main_shared0(%[[X]], %[[T]])
// CHECK-NEXT: scf.for
// CHECK: arith.addf
// CHECK: call @main_shared0(%[[T]], %[[Z]])
// CHECK-NEXT: memref.dealloc %[[T]]
// SMALL-NOT: call
func.func @main(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %t = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %t[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %t[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %t[%i] : memref<8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %z[%i] : memref<8xf32>
  }
  memref.dealloc %t : memref<8xf32>
  return
}

// -----

// Nests alike but for a constant they use (2.0 and 3.0) are different kernels: both
// stay in the entry, as they were.
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main(
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00
// CHECK: %[[THREE:.*]] = arith.constant 3.000000e+00
// CHECK: scf.for
// CHECK: arith.mulf %{{.*}}, %[[TWO]]
// CHECK: scf.for
// CHECK: arith.mulf %{{.*}}, %[[THREE]]
// CHECK-NOT: call
func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %y[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %y[%i] : memref<8xf32>
    %w = arith.mulf %v, %three : f32
    memref.store %w, %x[%i] : memref<8xf32>
  }
  return
}

// -----

// Nests alike but for which buffers they share: reading and writing two buffers is not
// the same kernel as updating one in place.
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>)
// CHECK-NOT: call
// CHECK: memref.load %[[X]]
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: memref.load %[[Y]]
// CHECK: memref.store %{{.*}}, %[[Y]]
func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %y[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<8xf32>
  }
  return
}
