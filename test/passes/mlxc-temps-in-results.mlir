// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-temps-in-results,mlxc-record-temp-memory)' | FileCheck %s

// Attention's shape: a transposed copy freed before the result is first written lives
// in the result buffer; the one alive at the same time (the result holds one at a time)
// and the one alive while the result is written keep their own allocations.
// CHECK-LABEL: module attributes {mlxc.entry = "main"
// CHECK-SAME: mlxc.temp_bytes = 1024 : i64
// CHECK: func.func @main(%[[X:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<8x4xf32>)
// CHECK: %[[T:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [4, 8], strides: [8, 1] : memref<8x4xf32> to memref<4x8xf32>
// CHECK: %[[O:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: memref.copy %[[X]], %[[T]]
// CHECK: memref.copy %[[T]], %[[O]]
// CHECK-NOT: memref.dealloc %[[T]]
// CHECK: memref.dealloc %[[O]]
// CHECK: %[[S:.*]] = memref.alloc() : memref<32x8xf32>
// CHECK: linalg.transpose ins(%[[X]] : memref<4x8xf32>) outs(%[[OUT]] : memref<8x4xf32>)
module attributes {mlxc.entry = "main", mlxc.signature = {inputs = [tensor<4x8xf32>], outputs = [tensor<8x4xf32>]}} {
  func.func @main(%x: memref<4x8xf32>, %out: memref<8x4xf32>) {
    %t = memref.alloc() : memref<4x8xf32>
    %o = memref.alloc() : memref<4x8xf32>
    memref.copy %x, %t : memref<4x8xf32> to memref<4x8xf32>
    memref.copy %t, %o : memref<4x8xf32> to memref<4x8xf32>
    memref.dealloc %t : memref<4x8xf32>
    memref.dealloc %o : memref<4x8xf32>
    %s = memref.alloc() : memref<32x8xf32>
    linalg.transpose ins(%x : memref<4x8xf32>) outs(%out : memref<8x4xf32>) permutation = [1, 0]
    memref.dealloc %s : memref<32x8xf32>
    return
  }
}

// -----

// Written first, the result takes nothing; written last, it still takes no temporary
// larger than itself. A temporary of another element type lives there through a view
// of the buffer retyped as bytes; the function's own uses read it with its old type.
// CHECK-LABEL: module attributes {mlxc.entry = "main"
// CHECK-SAME: mlxc.temp_bytes = 256 : i64
// CHECK: func.func @main(%{{.*}}: memref<4xf32>, %[[FIRST:.*]]: memref<4xf32>, %[[LAST:.*]]: memref<16xi8>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[WHOLE:.*]] = memref.view %[[LAST]][%[[C0]]][] : memref<16xi8> to memref<4xf32>
// CHECK-NOT: reinterpret_cast
// CHECK: memref.alloc() : memref<64xf32>
// CHECK: %[[INT:.*]] = memref.view %[[LAST]][%{{.*}}][] : memref<16xi8> to memref<4xi32>
// CHECK: memref.store %{{.*}}, %[[INT]]
// CHECK-NOT: memref.dealloc %[[INT]]
// CHECK: memref.copy %{{.*}}, %[[WHOLE]]
module attributes {mlxc.entry = "main", mlxc.signature = {inputs = [tensor<4xf32>], outputs = [tensor<4xf32>, tensor<4xf32>]}} {
  func.func @main(%x: memref<4xf32>, %first: memref<4xf32>, %last: memref<4xf32>) {
    memref.copy %x, %first : memref<4xf32> to memref<4xf32>
    %big = memref.alloc() : memref<64xf32>
    memref.dealloc %big : memref<64xf32>
    %int = memref.alloc() : memref<4xi32>
    %c1 = arith.constant 1 : index
    %i7 = arith.constant 7 : i32
    memref.store %i7, %int[%c1] : memref<4xi32>
    memref.dealloc %int : memref<4xi32>
    memref.copy %x, %last : memref<4xf32> to memref<4xf32>
    return
  }
}

// -----

// Two temporaries alive together share a larger result: the second after the first,
// 64-byte aligned, its layout carrying the offset (its users read any layout); a third
// used by a memref.copy (whose operand types must match) keeps its allocation.
// CHECK-LABEL: module attributes {mlxc.entry = "main"
// CHECK-SAME: mlxc.temp_bytes = 64 : i64
// CHECK: %[[A:.*]] = memref.reinterpret_cast %[[OUT:.*]] to offset: [0], sizes: [4, 4], strides: [4, 1] : memref<64xf32> to memref<4x4xf32>
// CHECK: %[[B:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [16], sizes: [4, 4], strides: [4, 1] : memref<64xf32> to memref<4x4xf32, strided<[4, 1], offset: 16>>
// CHECK: %[[C:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[B]][%{{.*}}, %{{.*}}] : vector<4xf32>, memref<4x4xf32, strided<[4, 1], offset: 16>>
module attributes {mlxc.entry = "main", mlxc.signature = {inputs = [tensor<4x4xf32>], outputs = [tensor<64xf32>]}} {
  func.func @main(%x: memref<4x4xf32>, %out: memref<64xf32>) {
    %c0 = arith.constant 0 : index
    %f0 = arith.constant 0.0 : f32
    %a = memref.alloc() : memref<4x4xf32>
    %b = memref.alloc() : memref<4x4xf32>
    %c = memref.alloc() : memref<4x4xf32>
    memref.copy %x, %a : memref<4x4xf32> to memref<4x4xf32>
    %v = vector.transfer_read %a[%c0, %c0], %f0 : memref<4x4xf32>, vector<4xf32>
    vector.transfer_write %v, %b[%c0, %c0] : vector<4xf32>, memref<4x4xf32>
    memref.copy %x, %c : memref<4x4xf32> to memref<4x4xf32>
    memref.dealloc %a : memref<4x4xf32>
    memref.dealloc %b : memref<4x4xf32>
    memref.dealloc %c : memref<4x4xf32>
    %w = vector.transfer_read %x[%c0, %c0], %f0 : memref<4x4xf32>, vector<4xf32>
    vector.transfer_write %w, %out[%c0] : vector<4xf32>, memref<64xf32>
    return
  }
}
