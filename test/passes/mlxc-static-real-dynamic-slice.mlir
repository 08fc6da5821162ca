// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-static-real-dynamic-slice)' | FileCheck %s

// x[i:i+3, j:j+2] with i, j from the data: the limit is the start plus a constant, so
// the slice has constant sizes; the start is computed twice, and cse makes it one value.
// CHECK-LABEL: func.func @data_dependent_start
// CHECK-NOT: real_dynamic_slice
// CHECK: %[[I:.*]] = stablehlo.reshape %{{.*}} : (tensor<1xi32>) -> tensor<i32>
// CHECK: %[[J:.*]] = stablehlo.reshape %{{.*}} : (tensor<1xi32>) -> tensor<i32>
// CHECK: %[[S:.*]] = stablehlo.dynamic_slice %arg0, %[[I]], %[[J]], sizes = [3, 2] : (tensor<5x4xf32>, tensor<i32>, tensor<i32>) -> tensor<3x2xf32>
// The refined function returns the static type; the cast left is folded by canonicalize.
// CHECK: %[[R:.*]] = stablehlo.convert %[[S]] : tensor<3x2xf32>
// CHECK: return %[[R]] : tensor<3x2xf32>
func.func @data_dependent_start(%x: tensor<5x4xf32>, %ij: tensor<2xi32>) -> tensor<?x?xf32> {
  %zero = stablehlo.constant dense<0> : tensor<2xi32>
  %start = stablehlo.add %ij, %zero : tensor<2xi32>
  %start2 = stablehlo.add %ij, %zero : tensor<2xi32>
  %size = stablehlo.constant dense<[3, 2]> : tensor<2xi32>
  %limit = stablehlo.add %start2, %size : tensor<2xi32>
  %ones = stablehlo.constant dense<1> : tensor<2xi32>
  %0 = stablehlo.real_dynamic_slice %x, %start, %limit, %ones : (tensor<5x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A stride other than 1, or a limit that is not start + constant, stays as it is.
// CHECK-LABEL: func.func @left_alone
// CHECK: stablehlo.real_dynamic_slice
// CHECK: stablehlo.real_dynamic_slice
func.func @left_alone(%x: tensor<5x4xf32>, %s: tensor<2xi32>, %l: tensor<2xi32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %size = stablehlo.constant dense<[2, 2]> : tensor<2xi32>
  %limit = stablehlo.add %s, %size : tensor<2xi32>
  %twos = stablehlo.constant dense<2> : tensor<2xi32>
  %ones = stablehlo.constant dense<1> : tensor<2xi32>
  %0 = stablehlo.real_dynamic_slice %x, %s, %limit, %twos : (tensor<5x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>
  %1 = stablehlo.real_dynamic_slice %x, %s, %l, %ones : (tensor<5x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}
