// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-select-entry)'

// expected-error @below {{no function named @main in the module (public functions: @forward)}}
func.func @forward(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// Entry points take and return ranked tensors only.
// expected-error @below {{argument 0 ('arg0') has type tensor<*xf32>}}
func.func @main(%a: tensor<*xf32>) -> tensor<*xf32> {
  return %a : tensor<*xf32>
}

// -----

// expected-error @below {{result 0 has type i32}}
func.func @main(%a: tensor<f32>) -> i32 {
  %c = arith.constant 1 : i32
  return %c : i32
}

// -----

// A declaration has nothing to compile.
// expected-error @below {{entry @main is only declared: it has no body to compile}}
func.func private @main(%a: tensor<4xf32>) -> tensor<4xf32>
