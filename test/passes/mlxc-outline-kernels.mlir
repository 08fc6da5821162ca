// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-outline-kernels{min-ops=1 always=true})' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-outline-kernels{always=true})' | FileCheck %s --check-prefix=SMALL

// Each top-level loop nest becomes a private kernel taking the buffers it uses; the
// constants it uses are cloned into it, and a reshape of an argument is redone inside
// (only identity-layout buffers cross the call). The nested loop stays in its kernel.
// CHECK-LABEL: func.func private @main_kernel0(%{{.*}}: memref<4x8xf32>) attributes {mlxc.kernel}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 1.000000e+00 : f32
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// CHECK: return
// CHECK-LABEL: func.func private @main_kernel1(
// CHECK-SAME: %[[A:.*]]: memref<32xf32>, %[[B:.*]]: memref<4x8xf32>) attributes {mlxc.kernel}
// CHECK: %[[R:.*]] = memref.expand_shape %[[A]]
// CHECK: scf.forall
// CHECK: memref.load %[[R]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: memref<32xf32>, %[[Y:.*]]: memref<4x8xf32>)
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT: call @main_kernel0(%[[T]]) : (memref<4x8xf32>) -> ()
// CHECK-NEXT: call @main_kernel1(%[[X]], %[[Y]]) : (memref<32xf32>, memref<4x8xf32>) -> ()
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: return
// Below the default size the program stays one function.
// SMALL-NOT: mlxc.kernel
// SMALL-NOT: call
func.func @main(%x: memref<32xf32>, %y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %r = memref.expand_shape %x [[0, 1]] output_shape [4, 8] : memref<32xf32> into memref<4x8xf32>
  %t = memref.alloc() : memref<4x8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      memref.store %one, %t[%i, %j] : memref<4x8xf32>
    }
  }
  scf.forall (%i, %j) in (4, 8) {
    %v = memref.load %r[%i, %j] : memref<4x8xf32>
    memref.store %v, %y[%i, %j] : memref<4x8xf32>
  }
  memref.dealloc %t : memref<4x8xf32>
  return
}

// -----

// A loop that yields a value stays in the entry (its value is passed to the kernel
// that uses it), and so does a loop using a buffer with a strided layout, which the
// bare-pointer calling convention cannot pass.
// CHECK-LABEL: func.func private @main_kernel0(%{{.*}}: f32, %{{.*}}: memref<8xf32>) attributes {mlxc.kernel}
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main
// CHECK: %[[S:.*]] = scf.for {{.*}} iter_args
// CHECK: call @main_kernel0(%[[S]], %{{.*}}) : (f32, memref<8xf32>) -> ()
// CHECK: scf.forall
func.func @main(%x: memref<8xf32>, %w: memref<4xf32, strided<[2]>>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> f32 {
    %v = memref.load %x[%i] : memref<8xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %s, %x[%i] : memref<8xf32>
  }
  scf.forall (%i) in (4) {
    memref.store %z, %w[%i] : memref<4xf32, strided<[2]>>
  }
  return %s : f32
}

// -----

// A layer function (mlxc-outline-layers) has its loop nests outlined too, named after
// it; a private function that is no layer keeps its loops.
// CHECK-LABEL: func.func private @main_layer0_kernel0(%{{.*}}: memref<8xf32>) attributes {mlxc.kernel}
// CHECK-LABEL: func.func private @main_layer0_kernel1(%{{.*}}: memref<8xf32>) attributes {mlxc.kernel}
// CHECK-LABEL: func.func private @main_layer0(
// CHECK-NEXT: call @main_layer0_kernel0(
// CHECK-NEXT: call @main_layer0_kernel1(
// SMALL-LABEL: func.func private @main_layer0(
// SMALL-NEXT: arith.constant
// CHECK-LABEL: func.func private @helper(
// CHECK-NEXT: arith.constant
// CHECK: scf.for
// CHECK: scf.for
func.func private @main_layer0(%x: memref<8xf32>) attributes {mlxc.layer} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %x[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<8xf32>
  }
  return
}
func.func private @helper(%x: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %x[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %x[%i] : memref<8xf32>
  }
  return
}
func.func @main(%x: memref<8xf32>) {
  return
}
