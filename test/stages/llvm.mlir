// RUN: mlxc-opt %s --mlxc-pipeline=cpu --mlxc-stop-after=llvm | FileCheck %s

// The llvm stage: only LLVM dialect ops; the entry takes one bare pointer per
// buffer; temporaries come from the runtime's allocator (runtime/mlxc_alloc.c), not
// malloc/free; contiguous copies become memcpy; the mlxc_entry wrapper gives the
// program its C signature.
// CHECK: mlxc.stage = "llvm"
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CHECK-NOT: llvm.func @malloc
// CHECK-DAG: llvm.mlir.global private constant @__constant_1xf32
// CHECK: llvm.func @main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: "llvm.intr.memcpy"
// CHECK: llvm.func @mlxc_entry(%{{.*}}: !llvm.ptr)
// CHECK: llvm.call @main({{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT: memref.
// CHECK-NOT: arith.
// CHECK-NOT: cf.

// Input: the lower-stage IR of test/stages/lower.mlir.
module attributes {mlxc.entry = "main", mlxc.stage = "lower"} {
  memref.global "private" constant @__constant_1xf32 : memref<1xf32> = dense<1.000000e+00> {alignment = 64 : i64}
  func.func public @main(%arg0: memref<8xf32>, %arg1: memref<i32>, %arg2: memref<8xf32>, %arg3: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : index
    %0 = memref.get_global @__constant_1xf32 : memref<1xf32>
    %1 = memref.load %arg1[] : memref<i32>
    %2 = arith.index_cast %1 : i32 to index
    %3 = arith.maxsi %2, %c0 : index
    %4 = arith.minsi %3, %c7 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
    memref.copy %arg0, %alloc : memref<8xf32> to memref<8xf32>
    %reinterpret_cast = memref.reinterpret_cast %alloc to offset: [%4], sizes: [1], strides: [1] : memref<8xf32> to memref<1xf32, strided<[1], offset: ?>>
    memref.copy %0, %reinterpret_cast : memref<1xf32> to memref<1xf32, strided<[1], offset: ?>>
    cf.br ^bb1(%c0 : index)
  ^bb1(%5: index):  // 2 preds: ^bb0, ^bb2
    %6 = arith.cmpi slt, %5, %c8 : index
    cf.cond_br %6, ^bb2, ^bb3
  ^bb2:  // pred: ^bb1
    %7 = memref.load %alloc[%5] : memref<8xf32>
    %8 = math.exp %7 : f32
    memref.store %8, %arg2[%5] : memref<8xf32>
    %9 = arith.addi %5, %c1 : index
    cf.br ^bb1(%9 : index)
  ^bb3:  // pred: ^bb1
    memref.copy %arg0, %arg3 : memref<8xf32> to memref<8xf32>
    memref.dealloc %alloc : memref<8xf32>
    return
  }
}
