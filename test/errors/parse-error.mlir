// RUN: not mlxc-opt %s 2>&1 | FileCheck %s
// RUN: not mlxc-opt %s --mlxc-pipeline=cpu 2>&1 | FileCheck %s

// CHECK: parse-error.mlir:[[# @LINE + 3]]:8: error: custom op 'stablehlo.frobnicate' is unknown
// CHECK-NOT: Traceback
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.frobnicate %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
