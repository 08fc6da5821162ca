// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-constant-buffers)' | FileCheck %s

// An argmax's running maxima after bufferization: each row stores -inf into its element
// and copies it into a private accumulator; nothing else reads the buffer. The copy
// becomes a fill of -inf and the 8-float buffer goes.
// CHECK-LABEL: func.func @argmax_maxima
// CHECK-NOT: memref.alloc() {{.*}} : memref<8xf32>
// CHECK: scf.forall
// CHECK: %[[ACC:.*]] = memref.alloc() {{.*}} : memref<1xf32>
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG]] : f32) outs(%[[ACC]] : memref<1xf32>)
// CHECK-NOT: memref.copy
// CHECK: memref.load %[[ACC]]
func.func @argmax_maxima(%x: memref<8x16xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant 0xFF800000 : f32
  %max = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  scf.forall (%i) in (8) {
    memref.store %ninf, %max[%i] : memref<8xf32>
    %s = memref.subview %max[%i] [1] [1] : memref<8xf32> to memref<1xf32, strided<[1], offset: ?>>
    %acc = memref.alloc() {alignment = 64 : i64} : memref<1xf32>
    memref.copy %s, %acc : memref<1xf32, strided<[1], offset: ?>> to memref<1xf32>
    %v = memref.load %acc[%c0] : memref<1xf32>
    memref.store %v, %out[%i] : memref<8xf32>
    memref.dealloc %acc : memref<1xf32>
  }
  memref.dealloc %max : memref<8xf32>
  return
}

// -----

// Read other than by a copy, or written with two constants: the buffer stays.
// CHECK-LABEL: func.func @kept
// CHECK: memref.alloc() {{.*}} : memref<8xf32>
// CHECK: memref.alloc() {{.*}} : memref<8xf32>
// CHECK: memref.copy
func.func @kept(%out: memref<8xf32>, %out2: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  memref.store %zero, %a[%c0] : memref<8xf32>
  %v = memref.load %a[%c0] : memref<8xf32>
  memref.store %v, %out[%c0] : memref<8xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  memref.store %zero, %b[%c0] : memref<8xf32>
  memref.store %one, %b[%c1] : memref<8xf32>
  %s = memref.subview %b[%c1] [1] [1] : memref<8xf32> to memref<1xf32, strided<[1], offset: ?>>
  memref.copy %s, %out2 : memref<1xf32, strided<[1], offset: ?>> to memref<1xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  return
}
