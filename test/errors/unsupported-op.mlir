// RUN: not mlxc-opt %s --mlxc-pipeline=cpu 2>&1 | FileCheck %s
// RUN: mlxc-opt %s --mlxc-pipeline=cpu --verify-diagnostics

// An op mlxc cannot lower is named, with its position, after the linalg stage.
// CHECK: unsupported-op.mlir:[[# @LINE + 5]]:8: error: mlxc cannot lower 'stablehlo.custom_call' yet
// CHECK: note: offending op: %0 = stablehlo.custom_call @my_kernel(%arg0)
// CHECK-NOT: Traceback
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{mlxc cannot lower 'stablehlo.custom_call' yet}}
  %0 = stablehlo.custom_call @my_kernel(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
