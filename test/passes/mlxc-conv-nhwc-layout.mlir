// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-conv-nhwc-layout)' | FileCheck %s

// An NCHW/OIHW convolution runs as NHWC/HWIO between transposes; the window is kept.
// CHECK-LABEL: func.func @nchw
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x9x7xf32>, %[[W:.*]]: tensor<4x3x3x2xf32>)
// CHECK-DAG: %[[XT:.*]] = stablehlo.transpose %[[X]], dims = [0, 2, 3, 1] : (tensor<2x3x9x7xf32>) -> tensor<2x9x7x3xf32>
// CHECK-DAG: %[[WT:.*]] = stablehlo.transpose %[[W]], dims = [2, 3, 1, 0] : (tensor<4x3x3x2xf32>) -> tensor<3x2x3x4xf32>
// CHECK: %[[C:.*]] = stablehlo.convolution(%[[XT]], %[[WT]]) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = {{\[\[}}1, 1], [0, 1]], rhs_dilate = [1, 2]}
// CHECK-SAME: (tensor<2x9x7x3xf32>, tensor<3x2x3x4xf32>) -> tensor<2x5x6x4xf32>
// CHECK: %[[R:.*]] = stablehlo.transpose %[[C]], dims = [0, 3, 1, 2] : (tensor<2x5x6x4xf32>) -> tensor<2x4x5x6xf32>
// CHECK: return %[[R]]
func.func @nchw(%x: tensor<2x3x9x7xf32>, %w: tensor<4x3x3x2xf32>) -> tensor<2x4x5x6xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 1], pad = [[1, 1], [0, 1]], rhs_dilate = [1, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x3x9x7xf32>, tensor<4x3x3x2xf32>) -> tensor<2x4x5x6xf32>
  return %0 : tensor<2x4x5x6xf32>
}

// -----

// Only the operands not already in place are transposed; the spatial order is kept
// (here W before H in the input: the kernel and result follow the input's order).
// CHECK-LABEL: func.func @mixed
// CHECK-NOT: stablehlo.transpose %arg1
// CHECK: %[[XT:.*]] = stablehlo.transpose %arg0, dims = [3, 1, 0, 2] : (tensor<5x6x3x2xf32>) -> tensor<2x6x5x3xf32>
// CHECK: %[[C:.*]] = stablehlo.convolution(%[[XT]], %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: -> tensor<2x4x3x8xf32>
// CHECK: stablehlo.transpose %[[C]], dims = [0, 3, 1, 2] : (tensor<2x4x3x8xf32>) -> tensor<2x8x4x3xf32>
func.func @mixed(%x: tensor<5x6x3x2xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<2x8x4x3xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [1, 0, f, b]x[0, 1, i, o]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<5x6x3x2xf32>, tensor<3x3x3x8xf32>) -> tensor<2x8x4x3xf32>
  return %0 : tensor<2x8x4x3xf32>
}

// -----

// Already NHWC/HWIO, grouped, and 1-D convolutions are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: stablehlo.transpose
// CHECK: stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK: stablehlo.convolution(%arg2, %arg3) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]
// CHECK-SAME: feature_group_count = 2
// CHECK: stablehlo.convolution(%arg4, %arg5) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0]
func.func @untouched(%a: tensor<1x5x5x2xf32>, %b: tensor<3x3x2x4xf32>,
                     %c: tensor<1x4x5x5xf32>, %d: tensor<6x2x3x3xf32>,
                     %e: tensor<1x2x5xf32>, %f: tensor<4x2x3xf32>)
    -> (tensor<1x3x3x4xf32>, tensor<1x6x3x3xf32>, tensor<1x4x3xf32>) {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>
  %1 = stablehlo.convolution(%c, %d) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>
  %2 = stablehlo.convolution(%e, %f) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x5xf32>, tensor<4x2x3xf32>) -> tensor<1x4x3xf32>
  return %0, %1, %2 : tensor<1x3x3x4xf32>, tensor<1x6x3x3xf32>, tensor<1x4x3xf32>
}
