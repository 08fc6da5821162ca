// A misnested, unknown or malformed pipeline is an error message, not a crash.
// RUN: not mlxc-opt %s --pass-pipeline='builtin.module(func.func(one-shot-bufferize))' 2>&1 | FileCheck %s --check-prefix=NEST
// RUN: not mlxc-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not mlxc-opt %s --pass-pipeline='builtin.module(func.func(mlxc-mark-inputs-readonly))' 2>&1 | FileCheck %s --check-prefix=PYNEST
// RUN: not mlxc-opt %s --pass-pipeline='builtin.module(mlxc-select-entry{entyr=main})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not mlxc-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not mlxc-opt %s --mlxc-pipeline=cpu --mlxc-stop-after=nope 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not mlxc-opt %s --mlxc-pipeline=tpu 2>&1 | FileCheck %s --check-prefix=TARGET

// NEST: mlxc-opt: error: invalid pass pipeline builtin.module(func.func(one-shot-bufferize))
// NEST: did you intend to nest?
// UNKNOWN: 'no-such-pass' does not refer to a registered pass or pass pipeline
// PYNEST: pass 'mlxc-mark-inputs-readonly' is an mlxc Python pass and runs on builtin.module only
// OPTION: pass 'mlxc-select-entry' has no option 'entyr' (options: entry)
// SYNTAX: invalid pass pipeline at column 19: expected ')'
// STAGE: pipeline 'cpu' has no stage 'nope'; its stages are: import, simplify, linalg, fuse, bufferize, lower, llvm
// TARGET: unknown target 'tpu'; available targets: cpu
// CHECK-NOT: Traceback

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
