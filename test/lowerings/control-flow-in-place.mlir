// RUN: mlxc-opt %s --mlxc-pipeline=cpu --mlxc-stop-after=bufferize | FileCheck %s

// Loop-carried values that can be updated in place are: the i32 counter is computed
// straight into its carried buffer, and the scan-like accumulator takes its new row
// in place (dynamic_update_slice). Neither is allocated nor copied per iteration; the
// buffers are allocated once before the loop. (The 1024-element state, recomputed
// elementwise, gets a new buffer per iteration: see control_flow.py for why.)
// CHECK-LABEL: func.func @main
// The accumulator is the caller's output buffer itself: filled once from the input,
// never allocated.
// CHECK-NOT: memref.alloc() {{.*}} : memref<8x1024xf32>
// CHECK-DAG: %[[COUNTER:.*]] = memref.alloc() {{.*}} : memref<i32>
// CHECK-DAG: memref.copy %arg2, %arg4 : memref<8x1024xf32> to memref<8x1024xf32>
// CHECK: scf.while
// The condition is computed into a carried i1 buffer, not a new one per iteration.
// CHECK-NOT: memref.alloc() {{.*}} : memref<i1>
// CHECK: scf.condition
// CHECK: } do {
// CHECK-NOT: memref.alloc() {{.*}} : memref<i32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<8x1024xf32>
// CHECK-NOT: memref.copy {{.*}} memref<8x1024xf32>
// CHECK-NOT: memref.copy {{.*}} : memref<i32> to
// CHECK: scf.yield
// CHECK-NOT: memref.copy {{.*}}, %arg4
// CHECK: return
func.func @main(%n: tensor<i32>, %x: tensor<1024xf32>, %ys: tensor<8x1024xf32>) -> (tensor<1024xf32>, tensor<8x1024xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %k = stablehlo.constant dense<1.5> : tensor<1024xf32>
  %r:3 = stablehlo.while(%i = %c0, %h = %x, %acc = %ys) : tensor<i32>, tensor<1024xf32>, tensor<8x1024xf32>
  cond {
    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %m = stablehlo.multiply %h, %k : tensor<1024xf32>
    %t = stablehlo.tanh %m : tensor<1024xf32>
    %row = stablehlo.reshape %t : (tensor<1024xf32>) -> tensor<1x1024xf32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %u = stablehlo.dynamic_update_slice %acc, %row, %i, %z : (tensor<8x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<8x1024xf32>
    %ni = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %ni, %t, %u : tensor<i32>, tensor<1024xf32>, tensor<8x1024xf32>
  }
  return %r#1, %r#2 : tensor<1024xf32>, tensor<8x1024xf32>
}
