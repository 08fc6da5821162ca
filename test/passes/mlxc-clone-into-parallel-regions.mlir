// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-clone-into-parallel-regions)' | FileCheck %s

// The constants, the poison and the descriptor built from the pointer %p are cloned
// into the region, so the region uses %p (a pointer, passed as it is) and not the
// descriptor or the constants. %n (an integer argument) and the value computed from
// it stay outside: cloning them would capture %n instead, no better. Uses outside the
// region keep the originals.
// CHECK-LABEL: llvm.func @tiles
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[N:.*]]: i64)
// CHECK: %[[C0:.*]] = llvm.mlir.constant(0 : index)
// CHECK: %[[C8:.*]] = llvm.mlir.constant(8 : index)
// CHECK: %[[D:.*]] = llvm.insertvalue %[[P]], {{.*}}[1]
// CHECK: %[[M:.*]] = llvm.mul %[[N]], %[[C8]]
// CHECK: omp.parallel {
// CHECK-DAG: %[[IC0:.*]] = llvm.mlir.constant(0 : index)
// CHECK-DAG: %[[IC8:.*]] = llvm.mlir.constant(8 : index)
// CHECK-DAG: %[[IPOISON:.*]] = llvm.mlir.poison
// CHECK: %[[ID:.*]] = llvm.insertvalue %[[P]], %[[IPOISON]][1]
// CHECK: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[I:.*]]) : i64 = (%[[IC0]]) to (%[[M]]) step (%[[IC8]]) {
// CHECK-NEXT: %[[BASE:.*]] = llvm.extractvalue %[[ID]][1]
// CHECK-NEXT: llvm.getelementptr %[[BASE]][%[[I]]]
// CHECK: omp.terminator
// CHECK: llvm.extractvalue %[[D]][1]
llvm.func @tiles(%p: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : index) : i64
  %c8 = llvm.mlir.constant(8 : index) : i64
  %poison = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64)>
  %d = llvm.insertvalue %p, %poison[1] : !llvm.struct<(ptr, ptr, i64)>
  %m = llvm.mul %n, %c8 : i64
  %one = llvm.mlir.constant(1.0 : f32) : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : i64 = (%c0) to (%m) step (%c8) {
        %base = llvm.extractvalue %d[1] : !llvm.struct<(ptr, ptr, i64)>
        %addr = llvm.getelementptr %base[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
        llvm.store %one, %addr : f32, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  %after = llvm.extractvalue %d[1] : !llvm.struct<(ptr, ptr, i64)>
  llvm.store %one, %after : f32, !llvm.ptr
  llvm.return
}
