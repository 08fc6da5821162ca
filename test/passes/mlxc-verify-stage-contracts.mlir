// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-verify-stage{stage=import})'
// RUN: not mlxc-opt %s --pass-pipeline='builtin.module(mlxc-verify-stage{stage=nosuchstage})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// UNKNOWN: no contract for stage 'nosuchstage'

// After 'import' the program is StableHLO with static shapes.
func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @below {{has a dynamic shape (tensor<?xf32>)}}
  %0 = stablehlo.abs %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @not_stablehlo(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'tensor.empty' is not a StableHLO op}}
  %0 = tensor.empty() : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A CHLO op left after 'import' has no decomposition: the error says how to export
// the program so that it carries one.
func.func @chlo_left(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{CHLO op 'chlo.erf' has no StableHLO decomposition in mlxc; export the program with jax.export}}
  %0 = chlo.erf %a : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
