// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-upcast-low-precision-dots)' | FileCheck %s

// A bf16 dot accumulates in f32 and rounds once at the end.
// CHECK-LABEL: func.func @bf16_dot
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xbf16>, %[[B:.*]]: tensor<8x2xbf16>)
// CHECK-DAG: %[[A32:.*]] = stablehlo.convert %[[A]] : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK-DAG: %[[B32:.*]] = stablehlo.convert %[[B]] : (tensor<8x2xbf16>) -> tensor<8x2xf32>
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[A32]], %[[B32]], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK: %[[R:.*]] = stablehlo.convert %[[D]] : (tensor<4x2xf32>) -> tensor<4x2xbf16>
// CHECK: return %[[R]]
func.func @bf16_dot(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
  return %0 : tensor<4x2xbf16>
}

// -----

// f16 convolutions too.
// CHECK-LABEL: func.func @f16_conv
// CHECK: stablehlo.convolution{{.*}}(tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>
// CHECK: stablehlo.convert {{.*}} : (tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf16>
func.func @f16_conv(%x: tensor<1x5x5x2xf16>, %w: tensor<3x3x2x4xf16>) -> tensor<1x3x3x4xf16> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x2xf16>, tensor<3x3x2x4xf16>) -> tensor<1x3x3x4xf16>
  return %0 : tensor<1x3x3x4xf16>
}

// -----

// f32 dots and dots that already produce f32 (preferred_element_type) are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: stablehlo.convert
// CHECK: stablehlo.dot_general %arg0, %arg1{{.*}} -> tensor<4x2xf32>
// CHECK: stablehlo.dot_general %arg2, %arg3{{.*}} -> tensor<4x2xf32>
func.func @untouched(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x8xbf16>, %d: tensor<8x2xbf16>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}
