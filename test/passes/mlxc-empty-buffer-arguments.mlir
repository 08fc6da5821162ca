// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-empty-buffer-arguments)' | FileCheck %s
// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-empty-buffer-arguments,finalize-memref-to-llvm,convert-func-to-llvm{use-bare-ptr-memref-call-conv},reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM

// A zero-size argument of rank > 1 becomes memref<0xT>; the body uses a zero-byte
// stand-in of the original type. Other arguments, and memref<0xT>, stay.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%arg0: memref<0xf32>, %arg1: memref<4xf32>, %arg2: memref<0xi8>, %arg3: memref<0xi4>)
// CHECK: %[[S:.*]] = memref.alloca() : memref<2x0x3xf32>
// CHECK: %[[T:.*]] = memref.alloca() : memref<0x5xi4>
// CHECK: memref.copy %[[S]], %[[S]]
// CHECK: memref.copy %arg1, %arg1
// CHECK: memref.copy %[[T]], %[[T]]

// The bare-pointer lowering then converts the function (it refuses memref<2x0x3xf32>).
// LLVM: llvm.func @main(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr)
// LLVM-NOT: func.func
func.func @main(%a: memref<2x0x3xf32>, %b: memref<4xf32>, %c: memref<0xi8>, %d: memref<0x5xi4>) {
  memref.copy %a, %a : memref<2x0x3xf32> to memref<2x0x3xf32>
  memref.copy %b, %b : memref<4xf32> to memref<4xf32>
  memref.copy %d, %d : memref<0x5xi4> to memref<0x5xi4>
  return
}
