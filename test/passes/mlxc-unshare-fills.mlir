// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-unshare-fills)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-unshare-fills,one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops})' | FileCheck %s --check-prefix=BUF

// Two matmuls start from one zero fill (as cse leaves them): each gets its own fill,
// just before it, so bufferization neither keeps the filled buffer nor copies it.
// CHECK-LABEL: func.func @two_matmuls
// CHECK: %[[E:.*]] = tensor.empty()
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] :
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[F1]] :
// CHECK-NEXT: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] :
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[F2]] :
// BUF-LABEL: func.func @two_matmuls
// BUF-NOT: memref.copy
// BUF: return
func.func @two_matmuls(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%b, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m1, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A fill as the CPU schedules leave it, a loop of vector writes, is copied too; a loop
// that reads tensor data is not a fill, and a use inside a loop keeps the one fill.
// CHECK-LABEL: func.func @tiled
// CHECK: %[[E:.*]] = tensor.empty()
// CHECK-NEXT: %[[F0:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[E]])
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %arg0)
// CHECK-NEXT: vector.transfer_read
// CHECK: %[[F1:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[E]])
// CHECK-NEXT: vector.transfer_write %cst
// CHECK: linalg.add ins(%[[R]], %[[R]] : {{.*}}) outs(%[[F1]] :
// CHECK-NEXT: %[[F2:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[E]])
// CHECK: linalg.sub ins(%[[R]], %[[R]] : {{.*}}) outs(%[[F2]] :
// CHECK: scf.for
// CHECK: linalg.mul {{.*}} outs(%[[F0]] :
func.func @tiled(%x: tensor<8xf32>, %n: index) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %p = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %e = tensor.empty() : tensor<8xf32>
  %f = scf.for %i = %c0 to %c8 step %c4 iter_args(%t = %e) -> (tensor<8xf32>) {
    %w = vector.transfer_write %zero, %t[%i] {in_bounds = [true]} : vector<4xf32>, tensor<8xf32>
    scf.yield %w : tensor<8xf32>
  }
  %r = scf.for %i = %c0 to %c8 step %c4 iter_args(%t = %x) -> (tensor<8xf32>) {
    %v = vector.transfer_read %t[%i], %p {in_bounds = [true]} : tensor<8xf32>, vector<4xf32>
    %w = vector.transfer_write %v, %t[%i] {in_bounds = [true]} : vector<4xf32>, tensor<8xf32>
    scf.yield %w : tensor<8xf32>
  }
  %a = linalg.add ins(%r, %r : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.sub ins(%r, %r : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<8xf32>) -> tensor<8xf32>
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> (tensor<8xf32>) {
    %m = linalg.mul ins(%t, %t : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %m : tensor<8xf32>
  }
  return %a, %s, %l : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
