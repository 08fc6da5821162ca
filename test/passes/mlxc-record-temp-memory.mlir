// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-record-temp-memory)' | FileCheck %s

// Two 4 KiB temporaries live together, then a 1 KiB one after the first is freed,
// and a 64-byte one allocated and freed in each loop iteration: peak 8 KiB + 64 B.
// Allocations outside the entry function do not count.
// CHECK: module attributes {mlxc.entry = "main", mlxc.temp_bytes = 8256 : i64}
module attributes {mlxc.entry = "main"} {
  func.func @main(%out: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = memref.alloc() : memref<1024xf32>
    %b = memref.alloc() : memref<32x32xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %t = memref.alloc() : memref<16xf32>
      memref.dealloc %t : memref<16xf32>
    }
    memref.dealloc %a : memref<1024xf32>
    %c = memref.alloc() : memref<256xi32>
    memref.dealloc %b : memref<32x32xf32>
    memref.dealloc %c : memref<256xi32>
    return
  }
  func.func private @other() {
    %x = memref.alloc() : memref<100000xf32>
    memref.dealloc %x : memref<100000xf32>
    return
  }
}
