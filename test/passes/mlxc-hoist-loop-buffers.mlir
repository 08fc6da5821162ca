// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-hoist-loop-buffers)' | FileCheck %s

// A fori_loop's index arithmetic: a rank-0 buffer written and read within each step,
// through a view too, in a loop nested in another. It is allocated once, before the
// outer loop; the buffer the step yields stays inside.
// CHECK-LABEL: func.func @index_arithmetic
// CHECK: %[[IDX:.*]] = memref.alloc() : memref<i32>
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK-NOT: memref.alloc() : memref<i32>
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: scf.yield
func.func @index_arithmetic(%x: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %k = arith.constant 7 : i32
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%a = %x) -> (memref<4xf32>) {
    %r2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %a) -> (memref<4xf32>) {
      %t = memref.alloc() : memref<i32>
      memref.store %k, %t[] : memref<i32>
      %v = memref.expand_shape %t [] output_shape [1] : memref<i32> into memref<1xi32>
      %e = memref.load %v[%c0] : memref<1xi32>
      %f = arith.sitofp %e : i32 to f32
      %new = memref.alloc() : memref<4xf32>
      linalg.fill ins(%f : f32) outs(%new : memref<4xf32>)
      scf.yield %new : memref<4xf32>
    }
    scf.yield %r2 : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// Left where they are: a buffer yielded to the next step, one larger than 1 KiB, one
// of dynamic size, one in a parallel loop (each thread needs its own), and one under
// an scf.if.
// CHECK-LABEL: func.func @kept
// CHECK: scf.for
// CHECK: memref.alloc() : memref<i32>
// CHECK: memref.alloc() : memref<512xf32>
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: scf.forall
// CHECK: memref.alloc() : memref<f32>
// CHECK: scf.if
// CHECK: memref.alloc() : memref<f64>
func.func @kept(%x: memref<i32>, %n: index, %p: i1) -> memref<i32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %d = arith.constant 1.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (memref<i32>) {
    %y = memref.alloc() : memref<i32>
    memref.copy %a, %y : memref<i32> to memref<i32>
    %big = memref.alloc() : memref<512xf32>
    linalg.fill ins(%f : f32) outs(%big : memref<512xf32>)
    %dyn = memref.alloc(%n) : memref<?xf32>
    linalg.fill ins(%f : f32) outs(%dyn : memref<?xf32>)
    scf.forall (%t) in (4) {
      %s = memref.alloc() : memref<f32>
      memref.store %f, %s[] : memref<f32>
    }
    scf.if %p {
      %q = memref.alloc() : memref<f64>
      memref.store %d, %q[] : memref<f64>
    }
    scf.yield %y : memref<i32>
  }
  return %r : memref<i32>
}
