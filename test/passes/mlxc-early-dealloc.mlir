// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-early-dealloc)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-early-dealloc,mlxc-record-temp-memory)' | FileCheck %s --check-prefix=PEAK

// Three 4 KiB temporaries in a row, each dead after the next one is computed: freed
// after their last use (through a view, inside a loop), two are live at once, not three.
// PEAK: mlxc.temp_bytes = 8192 : i64
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK: scf.for
// CHECK: memref.subview %[[A]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[C:.*]] = memref.alloc()
// CHECK-NEXT: memref.copy %[[B]], %[[C]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: memref.copy %[[C]], %arg1
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: return
module attributes {mlxc.entry = "main"} {
  func.func @main(%x: memref<1024xf32>, %out: memref<1024xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = memref.alloc() : memref<1024xf32>
    memref.copy %x, %a : memref<1024xf32> to memref<1024xf32>
    %b = memref.alloc() : memref<1024xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.subview %a[0] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1]>>
      %w = memref.subview %b[0] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1]>>
      memref.copy %v, %w : memref<256xf32, strided<[1]>> to memref<256xf32, strided<[1]>>
    }
    %c = memref.alloc() : memref<1024xf32>
    memref.copy %b, %c : memref<1024xf32> to memref<1024xf32>
    memref.copy %c, %out : memref<1024xf32> to memref<1024xf32>
    memref.dealloc %a : memref<1024xf32>
    memref.dealloc %b : memref<1024xf32>
    memref.dealloc %c : memref<1024xf32>
    return
  }
}

// -----

// A buffer carried out of a loop is used through the loop's result: it stays alive
// until that result's last use.
// CHECK-LABEL: func.func @carried
// CHECK: %[[R:.*]] = scf.for
// CHECK: memref.copy %[[R]], %arg1
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @carried(%x: memref<16xf32>, %out: memref<16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<16xf32>
  memref.copy %x, %a : memref<16xf32> to memref<16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> memref<16xf32> {
    scf.yield %acc : memref<16xf32>
  }
  memref.copy %r, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  return
}
