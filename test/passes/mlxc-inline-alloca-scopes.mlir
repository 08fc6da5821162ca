// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-inline-alloca-scopes)' | FileCheck %s

// The scope around a body without stack allocations goes; its ops stay in order.
// The scope whose body allocates on the stack stays, to free it each iteration.
// CHECK-LABEL: func.func @scopes
// CHECK: scf.for
// CHECK-NEXT: %[[X:.*]] = memref.load
// CHECK-NEXT: memref.store %[[X]]
// CHECK-NEXT: }
// CHECK: scf.for
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: memref.alloca()
// CHECK-NOT: memref.alloca_scope
// CHECK: return
func.func @scopes(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    memref.alloca_scope {
      %x = memref.load %a[%i] : memref<8xf32>
      memref.store %x, %b[%i] : memref<8xf32>
    }
  }
  scf.for %i = %c0 to %c8 step %c1 {
    memref.alloca_scope {
      %s = memref.alloca() : memref<1xf32>
      %x = memref.load %a[%i] : memref<8xf32>
      memref.store %x, %s[%c0] : memref<1xf32>
    }
  }
  return
}
