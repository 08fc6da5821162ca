// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-select-entry)' | FileCheck %s
// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-select-entry{entry=other})' | FileCheck %s --check-prefix=OTHER

// Every function but the entry becomes private; the entry's name is recorded.
// CHECK: module attributes {mlxc.entry = "main"}
// CHECK: func.func @main
// CHECK: func.func private @other

// OTHER: mlxc.entry = "other"
// OTHER: func.func private @main
// OTHER: func.func @other
module {
  func.func @main(%x: tensor<2x3xf32> loc("x"), %y: tensor<ui8>) -> (tensor<2x3xf32> {jax.result_info = "out"}, tensor<ui8>) {
    return %x, %y : tensor<2x3xf32>, tensor<ui8>
  }
  func.func @other(%a: tensor<4xi32>) -> tensor<4xi32> {
    return %a : tensor<4xi32>
  }
}
