// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-specialize-arguments{values=0:3})'

// Only rank-0 integers can be specialised by value.
// expected-error @below {{argument 0 of @main is tensor<3xi64>; only rank-0 integers}}
func.func public @main(%arg0: tensor<3xi64>, %arg1: tensor<3x4xf32>) -> tensor<3x4xf32> {
  return %arg1 : tensor<3x4xf32>
}

// -----

// expected-error @below {{@main has no argument 0}}
func.func public @main() {
  return
}
