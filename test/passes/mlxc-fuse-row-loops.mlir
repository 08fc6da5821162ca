// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-fuse-row-loops)' | FileCheck %s

// Softmax after bufferization: fill max (two chunks of 64), row max, fill sum, row sum
// of exp(x - max), output. One loop is left; the fills are stores at the row, and max
// and sum, one value per row, are SSA values: no buffer, no load.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: memref.alloc
// CHECK: scf.forall (%[[I:.*]]) in (128) {
// CHECK-NEXT: %[[NEG:.*]] = vector.broadcast %{{.*}} : f32 to vector<1xf32>
// CHECK: %[[MAX:.*]] = arith.maximumf %[[NEG]], %{{.*}} : vector<1xf32>
// CHECK: %[[ZERO:.*]] = vector.broadcast %{{.*}} : f32 to vector<1xf32>
// CHECK: vector.broadcast %[[MAX]] : vector<1xf32> to vector<40xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[ZERO]], %{{.*}} : vector<1xf32>
// CHECK: memref.subview %arg1[%[[I]], 0] [1, 1000]
// CHECK: vector.broadcast %[[SUM]] : vector<1xf32> to vector<40xf32>
// CHECK: }
// CHECK-NOT: scf.forall
// CHECK-NOT: memref.dealloc
// CHECK: return
#map = affine_map<(d0) -> (d0 * 64)>
func.func @softmax(%x: memref<128x1000xf32>, %out: memref<128x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c40 = arith.constant 40 : index
  %c1000 = arith.constant 1000 : index
  %pad = ub.poison : f32
  %neg = arith.constant dense<0xFF800000> : vector<64xf32>
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %neg40 = arith.constant dense<0xFF800000> : vector<40xf32>
  %zero40 = arith.constant dense<0.0> : vector<40xf32>
  %sum = memref.alloc() {alignment = 64 : i64} : memref<128xf32>
  %max = memref.alloc() {alignment = 64 : i64} : memref<128xf32>
  scf.forall (%t) in (2) {
    %o = affine.apply #map(%t)
    %v = memref.subview %max[%o] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1], offset: ?>>
    vector.transfer_write %neg, %v[%c0] {in_bounds = [true]} : vector<64xf32>, memref<64xf32, strided<[1], offset: ?>>
  }
  scf.forall (%i) in (128) {
    %v = memref.subview %max[%i] [1] [1] : memref<128xf32> to memref<1xf32, strided<[1], offset: ?>>
    %r = scf.for %j = %c0 to %c1000 step %c40 iter_args(%acc = %neg40) -> (vector<40xf32>) {
      %e = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<128x1000xf32>, vector<40xf32>
      %m = arith.maximumf %acc, %e : vector<40xf32>
      scf.yield %m : vector<40xf32>
    }
    %old = vector.transfer_read %max[%i], %pad {in_bounds = [true]} : memref<128xf32>, vector<1xf32>
    %s = vector.extract_strided_slice %r {offsets = [0], sizes = [1], strides = [1]} : vector<40xf32> to vector<1xf32>
    %new = arith.maximumf %old, %s : vector<1xf32>
    vector.transfer_write %new, %v[%c0] {in_bounds = [true]} : vector<1xf32>, memref<1xf32, strided<[1], offset: ?>>
  }
  scf.forall (%t) in (2) {
    %o = affine.apply #map(%t)
    %v = memref.subview %sum[%o] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1], offset: ?>>
    vector.transfer_write %zero, %v[%c0] {in_bounds = [true]} : vector<64xf32>, memref<64xf32, strided<[1], offset: ?>>
  }
  scf.forall (%i) in (128) {
    %v = memref.subview %sum[%i] [1] [1] : memref<128xf32> to memref<1xf32, strided<[1], offset: ?>>
    %r = scf.for %j = %c0 to %c1000 step %c40 iter_args(%acc = %zero40) -> (vector<40xf32>) {
      %e = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<128x1000xf32>, vector<40xf32>
      %m = vector.transfer_read %max[%i], %pad {in_bounds = [true]} : memref<128xf32>, vector<1xf32>
      %b = vector.broadcast %m : vector<1xf32> to vector<40xf32>
      %d = arith.subf %e, %b : vector<40xf32>
      %p = math.exp %d : vector<40xf32>
      %a = arith.addf %acc, %p : vector<40xf32>
      scf.yield %a : vector<40xf32>
    }
    %old = vector.transfer_read %sum[%i], %pad {in_bounds = [true]} : memref<128xf32>, vector<1xf32>
    %s = vector.extract_strided_slice %r {offsets = [0], sizes = [1], strides = [1]} : vector<40xf32> to vector<1xf32>
    %new = arith.addf %old, %s : vector<1xf32>
    vector.transfer_write %new, %v[%c0] {in_bounds = [true]} : vector<1xf32>, memref<1xf32, strided<[1], offset: ?>>
  }
  scf.forall (%i) in (128) {
    %row = memref.subview %out[%i, 0] [1, 1000] [1, 1] : memref<128x1000xf32> to memref<1x1000xf32, strided<[1000, 1], offset: ?>>
    scf.for %j = %c0 to %c1000 step %c40 {
      %e = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<128x1000xf32>, vector<40xf32>
      %m = vector.transfer_read %max[%i], %pad {in_bounds = [true]} : memref<128xf32>, vector<1xf32>
      %s = vector.transfer_read %sum[%i], %pad {in_bounds = [true]} : memref<128xf32>, vector<1xf32>
      %bm = vector.broadcast %m : vector<1xf32> to vector<40xf32>
      %d = arith.subf %e, %bm : vector<40xf32>
      %p = math.exp %d : vector<40xf32>
      %bs = vector.broadcast %s : vector<1xf32> to vector<40xf32>
      %q = arith.divf %p, %bs : vector<40xf32>
      vector.transfer_write %q, %row[%c0, %j] {in_bounds = [true]} : vector<40xf32>, memref<1x1000xf32, strided<[1000, 1], offset: ?>>
    }
  }
  memref.dealloc %max : memref<128xf32>
  memref.dealloc %sum : memref<128xf32>
  return
}

// -----

// The second loop reads the row after its own (max[i + 1]): iteration i depends on
// iteration i + 1 of the first. Nothing changes.
// CHECK-LABEL: func.func @next_row
// CHECK: memref.alloc() : memref<9xf32>
// CHECK: scf.forall
// CHECK: memref.store
// CHECK: scf.forall
// CHECK: affine.apply
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<9xf32>
// CHECK: memref.dealloc
#next = affine_map<(d0) -> (d0 + 1)>
func.func @next_row(%x: memref<9xf32>, %y: memref<8xf32>) {
  %t = memref.alloc() : memref<9xf32>
  scf.forall (%i) in (8) {
    %v = memref.load %x[%i] : memref<9xf32>
    memref.store %v, %t[%i] : memref<9xf32>
  }
  scf.forall (%i) in (8) {
    %n = affine.apply #next(%i)
    %v = memref.load %t[%n] : memref<9xf32>
    memref.store %v, %y[%i] : memref<8xf32>
  }
  memref.dealloc %t : memref<9xf32>
  return
}

// -----

// Same rows, but the second loop reads a column (t[j, i]): a transposed access. The
// loops stay apart and t stays a buffer.
// CHECK-LABEL: func.func @transposed
// CHECK: memref.alloc() : memref<4x4xf32>
// CHECK: scf.forall (%[[A:.*]]) in (4)
// CHECK: scf.forall (%[[B:.*]]) in (4)
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[B]]] : memref<4x4xf32>
func.func @transposed(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloc() : memref<4x4xf32>
  scf.forall (%i) in (4) {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %t[%i, %j] : memref<4x4xf32>
    }
  }
  scf.forall (%i) in (4) {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %t[%j, %i] : memref<4x4xf32>
      memref.store %v, %y[%i, %j] : memref<4x4xf32>
    }
  }
  memref.dealloc %t : memref<4x4xf32>
  return
}

// -----

// The temporary goes to a call between the loops' accesses (the call may read any
// row): no fusion.
// CHECK-LABEL: func.func @passed_to_call
// CHECK: scf.forall
// CHECK: call @use
// CHECK: scf.forall
func.func private @use(memref<4xf32>)
func.func @passed_to_call(%x: memref<4xf32>, %y: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  scf.forall (%i) in (4) {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %t[%i] : memref<4xf32>
  }
  call @use(%t) : (memref<4xf32>) -> ()
  scf.forall (%i) in (4) {
    %v = memref.load %t[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// A whole-buffer op inside the second loop (a linalg op on all of t): no fusion.
// CHECK-LABEL: func.func @whole_buffer
// CHECK: scf.forall
// CHECK: scf.forall
// CHECK: linalg.copy
func.func @whole_buffer(%x: memref<4xf32>, %y: memref<4x4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  scf.forall (%i) in (4) {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %t[%i] : memref<4xf32>
  }
  scf.forall (%i) in (4) {
    %row = memref.subview %y[%i, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    linalg.copy ins(%t : memref<4xf32>) outs(%row : memref<4xf32, strided<[1], offset: ?>>)
  }
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// Two views of one argument: the first loop writes y[i] through a reshape of y, the
// second reads y[i, 0] directly. Different views of one buffer are not compared: no
// fusion.
// CHECK-LABEL: func.func @two_views
// CHECK: scf.forall
// CHECK: scf.forall
func.func @two_views(%x: memref<4xf32>, %y: memref<4x1xf32>, %z: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %flat = memref.collapse_shape %y [[0, 1]] : memref<4x1xf32> into memref<4xf32>
  scf.forall (%i) in (4) {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %flat[%i] : memref<4xf32>
  }
  scf.forall (%i) in (4) {
    %v = memref.load %y[%i, %c0] : memref<4x1xf32>
    memref.store %v, %z[%i] : memref<4xf32>
  }
  return
}

// -----

// Rows of 16 values, used only in the fused loop, which is small (one thread): it
// becomes an scf.for and the temporary one stack row before it, indexed at row 0.
// CHECK-LABEL: func.func @stack_row
// CHECK-NOT: memref.alloc(
// CHECK: %[[ROW:.*]] = memref.alloca() : memref<1x16xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.store %{{.*}}, %[[ROW]][%[[Z:.*]], %{{.*}}] : memref<1x16xf32>
// CHECK: memref.load %[[ROW]][%[[Z]], %{{.*}}] : memref<1x16xf32>
// CHECK-NOT: scf.forall
// CHECK-NOT: memref.dealloc
func.func @stack_row(%x: memref<8x16xf32>, %y: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %t = memref.alloc() : memref<8x16xf32>
  scf.forall (%i) in (8) {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i, %j] : memref<8x16xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %t[%i, %j] : memref<8x16xf32>
    }
  }
  scf.forall (%i) in (8) {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %t[%i, %j] : memref<8x16xf32>
      memref.store %v, %y[%i, %j] : memref<8x16xf32>
    }
  }
  memref.dealloc %t : memref<8x16xf32>
  return
}

// -----

// A temporary used by the first loop only, of rows too large for the stack: fusing
// would keep it alive through the second loop (and a later one could not reuse its
// memory). No fusion.
// CHECK-LABEL: func.func @keeps_lifetimes
// CHECK: scf.forall
// CHECK: scf.forall
func.func @keeps_lifetimes(%x: memref<8x512xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %t = memref.alloc() : memref<8x512xf32>
  scf.forall (%i) in (8) {
    scf.for %j = %c0 to %c512 step %c1 {
      %v = memref.load %x[%i, %j] : memref<8x512xf32>
      memref.store %v, %t[%i, %j] : memref<8x512xf32>
    }
    %v = memref.load %t[%i, %c0] : memref<8x512xf32>
    memref.store %v, %y[%i] : memref<8xf32>
  }
  scf.forall (%i) in (8) {
    %v = memref.load %y[%i] : memref<8xf32>
    memref.store %v, %z[%i] : memref<8xf32>
  }
  memref.dealloc %t : memref<8x512xf32>
  return
}
