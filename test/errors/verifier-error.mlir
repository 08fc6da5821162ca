// RUN: mlxc-opt %s --split-input-file --verify-diagnostics
// RUN: not mlxc-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: verifier-error.mlir:[[# @LINE + 3]]:8: error: 'stablehlo.add' op requires the same shape
// CHECK-NOT: Traceback
func.func @main(%a: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32> // expected-error {{requires the same shape}}
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{use of undeclared SSA value name}}
  return %nope : tensor<4xf32>
}
