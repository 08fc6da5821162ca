// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-fold-unit-extent-dims)' | FileCheck %s

// The keepdims (4, 1) operand of a broadcast loses its unit dimension, as upstream does.
// CHECK-LABEL: func.func @broadcast_keepdims
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<4x1xf32> into tensor<4xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
func.func @broadcast_keepdims(%x: tensor<4x8xf32>, %m: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A strided convolution whose output width is 1: upstream drops the unit loop d4 of
// `d4 * 3 + d5` and the input's width (10) no longer matches d5's range (9), which does
// not verify. The function is left as it was.
// CHECK-LABEL: func.func @strided_conv_unit_width
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<3x3x9x10xf32>, tensor<3x3x4x9xf32>)
// CHECK-SAME: outs(%{{.*}} : tensor<3x3x3x1xf32>)
#in = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d6, d0, d2 * 2 + d3, d4 * 3 + d5)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d3, d5)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d6, d1, d2, d4)>
func.func @strided_conv_unit_width(%x: tensor<3x3x9x10xf32>, %w: tensor<3x3x4x9xf32>,
                                   %acc: tensor<3x3x3x1xf32>) -> tensor<3x3x3x1xf32> {
  %r = linalg.generic {indexing_maps = [#in, #w, #out],
                       iterator_types = ["reduction", "parallel", "parallel", "reduction",
                                         "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<3x3x9x10xf32>, tensor<3x3x4x9xf32>) outs(%acc : tensor<3x3x3x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x3x1xf32>
  return %r : tensor<3x3x3x1xf32>
}
