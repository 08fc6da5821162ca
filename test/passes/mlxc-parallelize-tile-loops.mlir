// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-parallelize-tile-loops)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-parallelize-tile-loops{min-work=100000000})' | FileCheck %s --check-prefix=HIGH

// A large tile loop (4 tiles x 256 rows x 8 vectors of 64, read and written: 2^20
// elements touched, the default threshold) becomes scf.parallel with the same bounds;
// its nested forall stays, the outer one already uses every thread.
// CHECK-LABEL: func.func @large
// CHECK: %[[UB:.*]] = arith.constant 4 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[UB]]) step (%{{.*}}) {
// CHECK:   affine.apply #{{.*}}(%[[I]])
// CHECK:   scf.forall
// CHECK:   scf.reduce
// CHECK-NOT: scf.forall.in_parallel
// HIGH-LABEL: func.func @large
// HIGH-NOT: scf.parallel
// HIGH: scf.forall (%{{.*}}) in (4)
func.func @large(%a: memref<1024x512xf32>, %b: memref<1024x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %pad = arith.constant 0.0 : f32
  scf.forall (%t) in (4) {
    %row0 = affine.apply affine_map<(d0) -> (d0 * 256)>(%t)
    scf.for %r = %c0 to %c256 step %c1 {
      %row = arith.addi %row0, %r : index
      scf.for %col = %c0 to %c512 step %c64 {
        %v = vector.transfer_read %a[%row, %col], %pad {in_bounds = [true]} : memref<1024x512xf32>, vector<64xf32>
        vector.transfer_write %v, %b[%row, %col] {in_bounds = [true]} : vector<64xf32>, memref<1024x512xf32>
      }
    }
    scf.forall (%u) in (2) {
      memref.store %pad, %b[%row0, %u] : memref<1024x512xf32>
    }
  }
  return
}

// -----

// The same loop over a quarter of the rows (2^18 elements touched, some 10 us on one
// thread) stays sequential: a second thread would save less than the parallel region
// costs to compile.
// CHECK-LABEL: func.func @medium
// CHECK-NOT: scf.parallel
// CHECK: scf.forall (%{{.*}}) in (4)
func.func @medium(%a: memref<256x512xf32>, %b: memref<256x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %pad = arith.constant 0.0 : f32
  scf.forall (%t) in (4) {
    %row0 = affine.apply affine_map<(d0) -> (d0 * 64)>(%t)
    scf.for %r = %c0 to %c64 step %c1 {
      %row = arith.addi %row0, %r : index
      scf.for %col = %c0 to %c512 step %c64 {
        %v = vector.transfer_read %a[%row, %col], %pad {in_bounds = [true]} : memref<256x512xf32>, vector<64xf32>
        vector.transfer_write %v, %b[%row, %col] {in_bounds = [true]} : vector<64xf32>, memref<256x512xf32>
      }
    }
  }
  return
}

// -----

// Small work (2 iterations of one store) and one tile loop: nothing changes.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: scf.forall (%{{.*}}) in (1)
func.func @small(%b: memref<4xf32>) {
  %pad = arith.constant 0.0 : f32
  scf.forall (%t) in (2) {
    memref.store %pad, %b[%t] : memref<4xf32>
  }
  scf.forall (%t) in (1) {
    memref.store %pad, %b[%t] : memref<4xf32>
  }
  return
}

// -----

// Stack allocations in the body: an OpenMP loop has no per-iteration stack scope.
// CHECK-LABEL: func.func @alloca
// CHECK-NOT: scf.parallel
// CHECK: scf.forall (%{{.*}}) in (1024)
func.func @alloca(%b: memref<1024x256xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  scf.forall (%t) in (1024) {
    %s = memref.alloca() : memref<256xf32>
    %v = vector.transfer_read %s[%c0], %pad {in_bounds = [true]} : memref<256xf32>, vector<256xf32>
    vector.transfer_write %v, %b[%t, %c0] {in_bounds = [true]} : vector<256xf32>, memref<1024x256xf32>
  }
  return
}

// -----

// A linalg op no schedule vectorized (argmax's two-result reduction) becomes a scalar
// loop nest: its body runs once per element of its largest operand (1x200 here, five
// chunks a row, 256 rows: ~2.5M scalar ops), not once. So the row loop is parallel.
// CHECK-LABEL: func.func @scalar_reduction
// CHECK: scf.parallel
// CHECK: linalg.generic
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @scalar_reduction(%x: memref<256x1000xf32>, %v: memref<256xf32>, %i: memref<256xi32>) {
  %c0 = arith.constant 0 : index
  %c200 = arith.constant 200 : index
  %c1000 = arith.constant 1000 : index
  scf.forall (%r) in (256) {
    %row = memref.subview %x[%r, 0] [1, 1000] [1, 1] : memref<256x1000xf32> to memref<1x1000xf32, strided<[1000, 1], offset: ?>>
    %vr = memref.subview %v[%r] [1] [1] : memref<256xf32> to memref<1xf32, strided<[1], offset: ?>>
    %ir = memref.subview %i[%r] [1] [1] : memref<256xi32> to memref<1xi32, strided<[1], offset: ?>>
    scf.for %j = %c0 to %c1000 step %c200 {
      %chunk = memref.subview %row[0, %j] [1, 200] [1, 1] : memref<1x1000xf32, strided<[1000, 1], offset: ?>> to memref<1x200xf32, strided<[1000, 1], offset: ?>>
      linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "reduction"]}
          ins(%chunk : memref<1x200xf32, strided<[1000, 1], offset: ?>>)
          outs(%vr, %ir : memref<1xf32, strided<[1], offset: ?>>, memref<1xi32, strided<[1], offset: ?>>) {
      ^bb0(%in: f32, %best: f32, %at: i32):
        %k = linalg.index 1 : index
        %kk = arith.index_cast %k : index to i32
        %gt = arith.cmpf ogt, %in, %best : f32
        %nv = arith.select %gt, %in, %best : f32
        %ni = arith.select %gt, %kk, %at : i32
        linalg.yield %nv, %ni : f32, i32
      }
    }
  }
  return
}
