// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-unpadded-convolutions)' | FileCheck %s

// A 3x3 SAME convolution: nine unpadded convolutions (interior, edges, corners), each
// reading a slice of the input and of the filter and written into its slice of the
// result, filled region by region in a fresh allocation (never merged with another
// result's by cse, which would make bufferization copy); no tensor.pad is left.
// CHECK-LABEL: func.func @same
// CHECK-NOT: tensor.pad
// CHECK: %[[E:.*]] = bufferization.alloc_tensor() : tensor<2x5x6x4xf32>
// CHECK: %[[O0:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [2, 1, 1, 4]
// CHECK: %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[O0]] : tensor<2x1x1x4xf32>)
// CHECK: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 2, 2, 3]
// CHECK: %[[W0:.*]] = tensor.extract_slice %arg1[1, 1, 0, 0] [2, 2, 3, 4]
// CHECK: %[[C0:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[X0]], %[[W0]] : tensor<2x2x2x3xf32>, tensor<2x2x3x4xf32>) outs(%[[F0]] : tensor<2x1x1x4xf32>)
// CHECK: %[[K0:.*]] = tensor.cast %[[C0]] : tensor<2x1x1x4xf32> to tensor<?x1x1x?xf32>
// CHECK: tensor.insert_slice %[[K0]] into %[[E]][0, 0, 0, 0] [%{{.*}}, 1, 1, %{{.*}}] [1, 1, 1, 1]
// The interior reads the whole input with the whole filter.
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x5x6x3xf32>, tensor<3x3x3x4xf32>) outs(%{{.*}} : tensor<2x3x4x4xf32>)
// CHECK-COUNT-4: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: return
func.func @same(%x: tensor<2x5x6x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<2x5x6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x5x6x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5x6x4xf32>) -> tensor<2x5x6x4xf32>
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x5x6x3xf32> to tensor<2x7x8x3xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<2x7x8x3xf32>, tensor<3x3x3x4xf32>) outs(%f : tensor<2x5x6x4xf32>) -> tensor<2x5x6x4xf32>
  return %c : tensor<2x5x6x4xf32>
}

// -----

// Padding with a value other than zero, or a strided convolution: left alone.
// CHECK-LABEL: func.func @kept
// CHECK: tensor.pad
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: tensor.pad
// CHECK: linalg.conv_2d_nhwc_hwcf
func.func @kept(%x: tensor<2x5x6x3xf32>, %w: tensor<3x3x3x4xf32>, %o: tensor<2x5x6x4xf32>, %o2: tensor<2x3x3x4xf32>) -> (tensor<2x5x6x4xf32>, tensor<2x3x3x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<2x5x6x3xf32> to tensor<2x7x8x3xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<2x7x8x3xf32>, tensor<3x3x3x4xf32>) outs(%o : tensor<2x5x6x4xf32>) -> tensor<2x5x6x4xf32>
  %q = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x5x6x3xf32> to tensor<2x7x8x3xf32>
  %d = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%q, %w : tensor<2x7x8x3xf32>, tensor<3x3x3x4xf32>) outs(%o2 : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  return %c, %d : tensor<2x5x6x4xf32>, tensor<2x3x3x4xf32>
}
