// RUN: mlxc-opt %s --mlxc-pipeline=cpu --mlxc-start-after=import --mlxc-stop-after=simplify | FileCheck %s

// Simplification folds identities and shares duplicate subexpressions.
// CHECK: mlxc.stage = "simplify"
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[E:.*]] = stablehlo.exponential %[[X]]
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[E]], %[[E]]
// CHECK-NEXT: return %[[M]]
module attributes {mlxc.entry = "main"} {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
    %0 = stablehlo.add %x, %zero : tensor<4xf32>
    %1 = stablehlo.exponential %0 : tensor<4xf32>
    %2 = stablehlo.exponential %x : tensor<4xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}
