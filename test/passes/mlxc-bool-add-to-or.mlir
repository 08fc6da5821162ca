// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-bool-add-to-or)' | FileCheck %s

// add on booleans is OR; add on other types stays.
// CHECK-LABEL: func.func @main
// CHECK: %[[O:.*]] = stablehlo.or %arg0, %arg1 : tensor<4xi1>
// CHECK: %[[A:.*]] = stablehlo.add %arg2, %arg2 : tensor<4xi8>
// CHECK: return %[[O]], %[[A]]
func.func @main(%a: tensor<4xi1>, %b: tensor<4xi1>, %c: tensor<4xi8>) -> (tensor<4xi1>, tensor<4xi8>) {
  %0 = stablehlo.add %a, %b : tensor<4xi1>
  %1 = stablehlo.add %c, %c : tensor<4xi8>
  return %0, %1 : tensor<4xi1>, tensor<4xi8>
}

