// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-mark-inputs-readonly)' | FileCheck %s
// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-mark-inputs-readonly,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map})' | FileCheck %s --check-prefix=BUF

// Public functions' tensor arguments become read-only; other attributes stay.
// CHECK: func.func @main(%arg0: tensor<4xf32> {bufferization.writable = false, jax.arg = 1 : i32}, %arg1: tensor<4xf32> {bufferization.writable = false})
// CHECK: func.func private @helper(%arg0: tensor<4xf32>)

// Bufferization then copies before writing instead of updating the caller's array.
// BUF-LABEL: func.func @main
// BUF: %[[ALLOC:.*]] = memref.alloc
// BUF: memref.copy %arg0, %[[ALLOC]]
// BUF: memref.store {{.*}}, %[[ALLOC]]
func.func @main(%a: tensor<4xf32> {jax.arg = 1 : i32}, %b: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  %0 = tensor.insert %f into %a[%c0] : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
