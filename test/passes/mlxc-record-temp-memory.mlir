// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-record-temp-memory)' | FileCheck %s

// Two 4 KiB temporaries live together, then a 1 KiB one after the first is freed,
// and a 64-byte one allocated and freed in each loop iteration: peak 8 KiB + 64 B.
// Allocations of a function the entry does not call do not count.
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

// -----

// A called function (a layer mlxc-outline-layers made) adds its own peak while it
// runs: 1 KiB live in the entry plus the layer's 2 KiB, twice, then 4 KiB alone.
// CHECK: module attributes {mlxc.entry = "main", mlxc.temp_bytes = 4096 : i64}
module attributes {mlxc.entry = "main"} {
  func.func private @main_layer0(%x: memref<4xf32>, %y: memref<4xf32>) attributes {mlxc.layer} {
    %t = memref.alloc() : memref<512xf32>
    memref.dealloc %t : memref<512xf32>
    return
  }
  func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
    %a = memref.alloc() : memref<256xf32>
    call @main_layer0(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
    call @main_layer0(%y, %x) : (memref<4xf32>, memref<4xf32>) -> ()
    memref.dealloc %a : memref<256xf32>
    %b = memref.alloc() : memref<1024xf32>
    memref.dealloc %b : memref<1024xf32>
    return
  }
}

// -----

// The same with 8 KiB in the entry: 8 KiB + 2 KiB while the layer runs.
// CHECK: module attributes {mlxc.entry = "main", mlxc.temp_bytes = 10240 : i64}
module attributes {mlxc.entry = "main"} {
  func.func private @main_layer0() attributes {mlxc.layer} {
    %t = memref.alloc() : memref<512xf32>
    memref.dealloc %t : memref<512xf32>
    return
  }
  func.func @main() {
    %a = memref.alloc() : memref<2048xf32>
    call @main_layer0() : () -> ()
    memref.dealloc %a : memref<2048xf32>
    return
  }
}
