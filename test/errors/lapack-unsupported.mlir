// RUN: not mlxc-opt %s --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' 2>&1 | FileCheck %s

// A LAPACK routine mlxc does not lower is refused by name, at its line.
// CHECK: lapack-unsupported.mlir:6:10: error: mlxc cannot lower custom_call @lapack_sgeev_ffi (LAPACK routines mlxc lowers:
func.func @unknown(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>) {
  %0:2 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = {mode = 65 : ui8}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<3xf32>
}
// CHECK-NOT: Traceback
