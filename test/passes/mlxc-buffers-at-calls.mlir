// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-buffers-at-calls)' | FileCheck %s

// Two calls shared one read-only view of %t (as cse leaves them); the write between
// them is what bufferization could put in %t's buffer. Each call gets its own
// to_buffer and view just before it, and the shared ones go.
// CHECK-LABEL: func.func @main
// CHECK: %[[B1:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK-NEXT: %[[V1:.*]] = memref.reinterpret_cast %[[B1]]
// CHECK-NEXT: call @k(%[[V1]])
// CHECK: linalg.fill
// CHECK: %[[B2:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK-NEXT: %[[V2:.*]] = memref.reinterpret_cast %[[B2]]
// CHECK-NEXT: call @k(%[[V2]])
// CHECK-NOT: bufferization.to_buffer
// CHECK: return
func.func private @k(memref<f32>)
func.func @main(%t: tensor<4xf32>, %f: f32) -> tensor<4xf32> {
  %b = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
  %v = memref.reinterpret_cast %b to offset: [0], sizes: [], strides: [] : memref<4xf32> to memref<f32>
  call @k(%v) : (memref<f32>) -> ()
  %e = tensor.empty() : tensor<4xf32>
  %w = linalg.fill ins(%f : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  call @k(%v) : (memref<f32>) -> ()
  return %w : tensor<4xf32>
}
