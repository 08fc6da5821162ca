// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-verify-stage{stage=bufferize})'

// After 'bufferize' no value has a tensor type ...
func.func @main(%a: memref<4xf32>, %out: memref<4xf32>) {
  // expected-error @below {{'bufferization.to_tensor' still has a value of tensor type tensor<4xf32>}}
  %t = bufferization.to_tensor %a : memref<4xf32> to tensor<4xf32>
  return
}

// -----

// ... and the entry returns nothing: its results became output buffers.
module attributes {mlxc.entry = "main"} {
  // expected-error @below {{entry @main still returns values}}
  func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
    return %a : memref<4xf32>
  }
}
