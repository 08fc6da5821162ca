// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-verify-stage{stage=linalg})' | FileCheck %s

// A module that meets the contract is marked with the stage it completed.
// CHECK: module attributes {mlxc.stage = "linalg"}
func.func @ok(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.abs ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// After 'linalg' no StableHLO op may remain: the error names the op mlxc cannot lower.
func.func @left(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{mlxc cannot lower 'stablehlo.sort' yet}}
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
