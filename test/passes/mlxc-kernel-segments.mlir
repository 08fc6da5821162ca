// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-kernel-segments{min-ops=1})' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-kernel-segments{min-ops=1},mlxc-outline-kernels{min-ops=1 always=true})' | FileCheck %s --check-prefix=OUTLINE
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-kernel-segments{min-ops=1},mlxc-kernel-segments{min-ops=1 unwrap=true})' | FileCheck %s --check-prefix=UNWRAP

// A column sum whose accumulator the schedules hoisted out of its loop (the loop
// yields it), its mean and the store: one closed segment. The loop that yields
// nothing stays a nest of its own; the constants stay outside.
// CHECK-LABEL: func.func @main(
// CHECK: memref.alloc
// CHECK-NEXT: scf.execute_region {
// CHECK-NEXT: scf.for {{.*}} -> (vector<8xf32>)
// CHECK: arith.divf
// CHECK-NEXT: vector.transfer_write
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// CHECK-NOT: scf.execute_region
// CHECK: return
// Outlined like the loop after it, and inlined inside its kernel.
// OUTLINE-LABEL: func.func private @main_kernel0(
// OUTLINE-NOT: scf.execute_region
// OUTLINE: scf.for {{.*}} -> (vector<8xf32>)
// OUTLINE: arith.divf
// OUTLINE-LABEL: func.func private @main_kernel1(
// OUTLINE-LABEL: func.func @main(
// OUTLINE: call @main_kernel0
// OUTLINE-NEXT: call @main_kernel1
// UNWRAP-LABEL: func.func @main(
// UNWRAP-NOT: scf.execute_region
// UNWRAP: scf.for {{.*}} -> (vector<8xf32>)
// UNWRAP: arith.divf
// UNWRAP-NEXT: vector.transfer_write
func.func @main(%x: memref<16x8xf32>, %y: memref<8xf32>, %z: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : vector<8xf32>
  %n = arith.constant dense<16.0> : vector<8xf32>
  %p = ub.poison : f32
  %t = memref.alloc() : memref<8xf32>
  %s = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (vector<8xf32>) {
    %v = vector.transfer_read %x[%i, %c0], %p {in_bounds = [true]} : memref<16x8xf32>, vector<8xf32>
    %a = arith.addf %acc, %v : vector<8xf32>
    scf.yield %a : vector<8xf32>
  }
  %m = arith.divf %s, %n : vector<8xf32>
  vector.transfer_write %m, %y[%c0] {in_bounds = [true]} : vector<8xf32>, memref<8xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %v = vector.transfer_read %x[%i, %c0], %p {in_bounds = [true]} : memref<16x8xf32>, vector<8xf32>
    vector.transfer_write %v, %z[%i, %c0] {in_bounds = [true]} : vector<8xf32>, memref<16x8xf32>
  }
  memref.dealloc %t : memref<8xf32>
  return
}

// -----

// A value read after a call (a batch mean kept for the backward pass): the segment
// stores it into a stack buffer of the function at its end, and the op after the call
// loads it back; nothing the segment defines is used outside it.
// CHECK-LABEL: func.func @main(
// CHECK: %[[B:.*]] = memref.alloca() : memref<vector<8xf32>>
// CHECK: scf.execute_region {
// CHECK: %[[M:.*]] = arith.divf
// CHECK: vector.transfer_write %[[M]]
// CHECK: memref.store %[[M]], %[[B]][] : memref<vector<8xf32>>
// CHECK-NEXT: scf.yield
// CHECK: call @other
// CHECK: %[[L:.*]] = memref.load %[[B]][] : memref<vector<8xf32>>
// CHECK-NEXT: vector.transfer_write %[[L]], %arg2
// UNWRAP-LABEL: func.func @main(
// UNWRAP-NOT: scf.execute_region
func.func private @other(memref<8xf32>)
func.func @main(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant dense<16.0> : vector<8xf32>
  %p = ub.poison : f32
  %v = vector.transfer_read %x[%c0], %p {in_bounds = [true]} : memref<8xf32>, vector<8xf32>
  %m = arith.divf %v, %n : vector<8xf32>
  vector.transfer_write %m, %y[%c0] {in_bounds = [true]} : vector<8xf32>, memref<8xf32>
  call @other(%y) : (memref<8xf32>) -> ()
  vector.transfer_write %m, %z[%c0] {in_bounds = [true]} : vector<8xf32>, memref<8xf32>
  return
}
