// RUN: not mlxc-opt %s --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' 2>&1 | FileCheck %s

// A LAPACK routine mlxc does not lower is refused by name, at its line.
// CHECK: lapack-unsupported.mlir:6:10: error: mlxc cannot lower custom_call @lapack_sgtsv_ffi (LAPACK routines mlxc lowers:
func.func @unknown(%dl: tensor<3xf32>, %b: tensor<3x1xf32>) -> tensor<3x1xf32> {
  %0:5 = stablehlo.custom_call @lapack_sgtsv_ffi(%dl, %dl, %dl, %b) {mhlo.backend_config = {}} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x1xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x1xf32>, tensor<i32>)
  return %0#3 : tensor<3x1xf32>
}
// CHECK-NOT: Traceback
