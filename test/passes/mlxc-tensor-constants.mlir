// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-tensor-constants)' | FileCheck %s

// A tensor arith.constant (torch-mlir's eps) becomes stablehlo.constant; a scalar
// arith.constant, which is not a StableHLO value, stays.
// CHECK-LABEL: func.func @main
// CHECK: %[[C:.*]] = stablehlo.constant dense<{{.*}}E-6> : tensor<1xf32>
// CHECK: %[[S:.*]] = arith.constant 2 : index
// CHECK-NOT: arith.constant dense
// CHECK: stablehlo.add %arg0, %[[C]]
func.func @main(%a: tensor<1xf32>) -> (tensor<1xf32>, index) {
  %eps = arith.constant dense<1.0e-05> : tensor<1xf32>
  %s = arith.constant 2 : index
  %0 = stablehlo.add %a, %eps : tensor<1xf32>
  return %0, %s : tensor<1xf32>, index
}
