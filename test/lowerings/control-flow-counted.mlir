// RUN: mlxc-opt %s --mlxc-pipeline=cpu --mlxc-stop-after=bufferize | FileCheck %s

// lax.scan over 8 steps as scf.for: the state, recomputed elementwise each step, gets
// a new buffer that is the next step's state as it is (no copy, as scf.while makes in
// its before region), the stacked output takes its rows in place, and no counter
// buffer exists: the step index is the loop's induction variable. The loop only reads
// its initial state, so it starts from the input itself (mlxc-uncopied-loop-inputs).
// CHECK-LABEL: func.func @main
// CHECK-NOT: memref<i32>
// CHECK-NOT: memref<i1>
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(%{{.*}} = %arg0,
// CHECK-NOT: memref.copy
// CHECK-NOT: memref<i32>
// CHECK: %[[NEW:.*]] = memref.alloc() {{.*}} : memref<1024xf32>
// CHECK-NOT: memref.copy
// CHECK: vector.transfer_write {{.*}}, %arg3[
// CHECK-NOT: memref.copy
// CHECK: scf.yield %[[NEW]]
// CHECK-NOT: scf.while
func.func @main(%x: tensor<1024xf32>, %ys: tensor<8x1024xf32>) -> (tensor<1024xf32>, tensor<8x1024xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %k = stablehlo.constant dense<1.5> : tensor<1024xf32>
  %r:3 = stablehlo.while(%i = %c0, %h = %x, %acc = %ys) : tensor<i32>, tensor<1024xf32>, tensor<8x1024xf32>
  cond {
    %n = stablehlo.constant dense<8> : tensor<i32>
    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
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
