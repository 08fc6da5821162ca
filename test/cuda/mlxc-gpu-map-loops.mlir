// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-gpu-map-loops{threads=128})' | FileCheck %s

// A 3x5x7 iteration space (105 iterations) becomes one block of 128 threads; the
// linear index is guarded and split back into (i, j, k) in row-major order.
// CHECK-LABEL: func.func @main
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[C128:.*]]) step (%{{.*}}) {
// CHECK: %[[BASE:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK: %[[L:.*]] = arith.addi %[[BASE]], %[[T]] : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[L]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[I:.*]] = arith.divui %[[L]], %{{.*}} : index
// CHECK: %[[JQ:.*]] = arith.divui %[[L]], %{{.*}} : index
// CHECK: %[[J:.*]] = arith.remui %[[JQ]], %{{.*}} : index
// CHECK: %[[K:.*]] = arith.remui %[[L]], %{{.*}} : index
// CHECK: memref.store %{{.*}}, %arg0[%[[I]], %[[J]], %[[K]]]
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
func.func @main(%y: memref<3x5x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c3, %c5, %c7) step (%c1, %c1, %c1) {
    memref.store %one, %y[%i, %j, %k] : memref<3x5x7xf32>
  }
  return
}

// A loop with no iterations (a zero-size array) is deleted.
// CHECK-LABEL: func.func @empty
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @empty(%y: memref<0x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c0, %c3) step (%c1, %c1) {
    memref.store %one, %y[%i, %j] : memref<0x3xf32>
  }
  return
}
