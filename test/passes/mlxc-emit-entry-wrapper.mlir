// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-emit-entry-wrapper)' | FileCheck %s

// The wrapper loads one pointer per buffer from its argument and calls the entry.
// CHECK-LABEL: llvm.func @main(
// CHECK-LABEL: llvm.func @mlxc_entry(%arg0: !llvm.ptr) {
// CHECK: %[[G0:.*]] = llvm.getelementptr %arg0[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[G0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[G1:.*]] = llvm.getelementptr %arg0[1]
// CHECK: %[[P1:.*]] = llvm.load %[[G1]]
// CHECK: %[[G2:.*]] = llvm.getelementptr %arg0[2]
// CHECK: %[[P2:.*]] = llvm.load %[[G2]]
// CHECK: llvm.call @main(%[[P0]], %[[P1]], %[[P2]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: llvm.return
module attributes {mlxc.entry = "main"} {
  llvm.func @main(%in0: !llvm.ptr, %in1: !llvm.ptr, %out0: !llvm.ptr) {
    llvm.return
  }
}

// -----

// The entry must use the bare-pointer convention (buffers in, nothing out).
module attributes {mlxc.entry = "main"} {
  // expected-error @below {{has type !llvm.func<i32 (ptr)>; expected only buffer pointers and no results}}
  llvm.func @main(%in0: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{no llvm.func @main}}
module attributes {mlxc.entry = "main"} {
  func.func @main() {
    return
  }
}
