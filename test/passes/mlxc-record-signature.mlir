// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-record-signature)' | FileCheck %s

// The signature keeps StableHLO's unsigned types and the names JAX gives arguments
// (loc("x")) and results (jax.result_info); unnamed ones are numbered.
// CHECK: mlxc.signature = {input_names = ["x", "arg1"], inputs = [tensor<2x3xf32>, tensor<ui8>], output_names = ["out", "result1"], outputs = [tensor<2x3xf32>, tensor<ui8>]}
module attributes {mlxc.entry = "main"} {
  func.func @main(%x: tensor<2x3xf32> loc("x"), %y: tensor<ui8>) -> (tensor<2x3xf32> {jax.result_info = "out"}, tensor<ui8>) {
    return %x, %y : tensor<2x3xf32>, tensor<ui8>
  }
}

// -----

// Dynamic dimensions are recorded as they are (the runtime specialises on calls).
// CHECK: mlxc.signature = {input_names = ["arg0"], inputs = [tensor<?x4xf32>], output_names = ["result"], outputs = [tensor<?x4xf32>]}
module attributes {mlxc.entry = "main"} {
  func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    return %x : tensor<?x4xf32>
  }
}

// -----

// expected-error @below {{mlxc-record-signature: no entry @forward; run mlxc-select-entry first}}
module attributes {mlxc.entry = "forward"} {
  func.func @main() {
    return
  }
}
