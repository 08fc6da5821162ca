// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-library-convs)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --mlxc-pipeline cpu --mlxc-start-after fuse --mlxc-stop-after bufferize | FileCheck %s --check-prefix=BUF

// A SAME convolution: the call reads the unpadded input (%arg0 itself, with the
// padding 1, 1 as arguments), writes a fresh buffer that becomes the result, and the
// pad and the zero fill are gone. Each buffer goes as a memref<f32> of its first element.
// Arguments: n h w c, kh kw f, oh ow, strides, dilations, low padding, the filter's
// element strides along H W I O (dense HWIO here: 36 12 4 1), threads.
// CHECK-LABEL: func.func @same
// CHECK-NOT: tensor.pad
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[X:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2x5x6x3xf32> to memref<2x5x6x3xf32>
// CHECK-DAG: %[[W:.*]] = bufferization.to_buffer %arg1 read_only : tensor<3x3x3x4xf32> to memref<3x3x3x4xf32>
// CHECK-DAG: %[[O:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x5x6x4xf32>
// CHECK-DAG: %[[XP:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [], strides: [] : memref<2x5x6x3xf32> to memref<f32>
// CHECK-DAG: %[[OP:.*]] = memref.reinterpret_cast %[[O]] to offset: [0], sizes: [], strides: [] : memref<2x5x6x4xf32> to memref<f32>
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[C36:.*]] = arith.constant 36 : index
// CHECK: call @mlxc_sconv(%[[XP]], %{{.*}}, %[[OP]], %[[C2]], %[[C5]], %[[C6]], %[[C3]], %[[C3]], %[[C3]], %[[C4]], %[[C5]], %[[C6]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C36]], %[[C12]], %[[C4]], %[[C1]], %{{.*}}) : (memref<f32>, memref<f32>, memref<f32>, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, i32) -> ()
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[O]] restrict writable
// CHECK: return %[[R]]
// CHECK: func.func private @mlxc_sconv(memref<f32>, memref<f32>, memref<f32>, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, i32)
// After bufferization the result buffer is the output argument, and no temporary is
// left: no padded copy.
// BUF: module attributes {{{.*}}mlxc.temp_bytes = 0 : i64}
// BUF-LABEL: func.func @same(%arg0: memref<2x5x6x3xf32>, %arg1: memref<3x3x3x4xf32>, %arg2: memref<2x5x6x4xf32>)
// BUF-NOT: memref.alloc
// BUF: %[[OUT:.*]] = memref.reinterpret_cast %arg2
// BUF-NOT: memref.alloc
// BUF: call @mlxc_sconv(%{{.*}}, %{{.*}}, %[[OUT]],
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

// Stride 2 with padding only after the input (SAME for an even size), dilation 2 in
// width, and a pad another op also reads: it stays for that op, the call still
// reads the unpadded input.
// Arguments: 1 9 9 2, 3 3 5, 4 3, strides 2 2, dilations 1 2, low 0 0.
// CHECK-LABEL: func.func @strided
// CHECK: %[[P:.*]] = tensor.pad %arg0
// CHECK-DAG: %[[X:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK-DAG: %[[XP:.*]] = memref.reinterpret_cast %[[X]]
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C9:.*]] = arith.constant 9 : index
// CHECK: call @mlxc_sconv(%[[XP]], %{{.*}}, %{{.*}}, %[[C1]], %[[C9]], %[[C9]], %[[C2]], %[[C3]], %[[C3]], %[[C5]], %[[C4]], %[[C3]], %[[C2]], %[[C2]], %[[C1]], %[[C2]], %[[C0]], %[[C0]], {{.*}})
// CHECK: return %{{.*}}, %[[P]]
func.func @strided(%x: tensor<1x9x9x2xf32>, %w: tensor<3x3x2x5xf32>) -> (tensor<1x4x3x5xf32>, tensor<1x10x10x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x3x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x3x5xf32>) -> tensor<1x4x3x5xf32>
  %p = tensor.pad %x low[0, 0, 0, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x9x9x2xf32> to tensor<1x10x10x2xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %w : tensor<1x10x10x2xf32>, tensor<3x3x2x5xf32>) outs(%f : tensor<1x4x3x5xf32>) -> tensor<1x4x3x5xf32>
  return %c, %p : tensor<1x4x3x5xf32>, tensor<1x10x10x2xf32>
}

// -----

// A 1-D convolution is the 2-D case of height 1: n 1 w c, 1 kw f, 1 ow, low 0 2.
// CHECK-LABEL: func.func @one_d
// CHECK-NOT: tensor.pad
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C40:.*]] = arith.constant 40 : index
// CHECK: call @mlxc_sconv(%{{.*}}, %{{.*}}, %{{.*}}, %[[C2]], %[[C1]], %[[C40]], %[[C8]], %[[C1]], %[[C5]], %[[C16]], %[[C1]], %[[C40]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C0]], %[[C2]], {{.*}})
func.func @one_d(%x: tensor<2x40x8xf32>, %w: tensor<5x8x16xf32>) -> tensor<2x40x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x40x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x40x16xf32>) -> tensor<2x40x16xf32>
  %p = tensor.pad %x low[0, 2, 0] high[0, 2, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<2x40x8xf32> to tensor<2x44x8xf32>
  %c = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
      ins(%p, %w : tensor<2x44x8xf32>, tensor<5x8x16xf32>) outs(%f : tensor<2x40x16xf32>) -> tensor<2x40x16xf32>
  return %c : tensor<2x40x16xf32>
}

// -----

// Left alone: f64, and an output that does not start from zero (a bias accumulated
// into the sum).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: mlxc_sconv
// CHECK-COUNT-2: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: mlxc_sconv
func.func @kept(%x: tensor<1x6x6x2xf32>, %w: tensor<3x3x2x4xf32>, %b: tensor<1x4x4x4xf32>,
                %xd: tensor<1x6x6x2xf64>, %wd: tensor<3x3x2x4xf64>) -> (tensor<1x4x4x4xf64>, tensor<1x4x4x4xf32>) {
  %zerod = arith.constant 0.0 : f64
  %ed = tensor.empty() : tensor<1x4x4x4xf64>
  %fd = linalg.fill ins(%zerod : f64) outs(%ed : tensor<1x4x4x4xf64>) -> tensor<1x4x4x4xf64>
  %c0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%xd, %wd : tensor<1x6x6x2xf64>, tensor<3x3x2x4xf64>) outs(%fd : tensor<1x4x4x4xf64>) -> tensor<1x4x4x4xf64>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>) outs(%b : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c0, %c1 : tensor<1x4x4x4xf64>, tensor<1x4x4x4xf32>
}

// -----

// Padding with another value than zero, or of the channels, is not the kernel's: the
// pad stays and the call reads the padded tensor as an unpadded input.
// CHECK-LABEL: func.func @other_padding
// CHECK: %[[ONES:.*]] = tensor.pad %arg0 low[0, 1, 1, 0]
// CHECK: bufferization.to_buffer %[[ONES]] read_only
// CHECK: call @mlxc_sconv
// CHECK: %[[CH:.*]] = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 0, 1]
// CHECK: bufferization.to_buffer %[[CH]] read_only
// CHECK: call @mlxc_sconv
func.func @other_padding(%x: tensor<1x6x6x2xf32>, %w: tensor<3x3x2x4xf32>, %w3: tensor<3x3x3x4xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x6x6x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<1x6x6x2xf32> to tensor<1x8x8x2xf32>
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) outs(%f : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %pc = tensor.pad %x low[0, 0, 0, 0] high[0, 0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x2xf32> to tensor<1x6x6x3xf32>
  %c3 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%pc, %w3 : tensor<1x6x6x3xf32>, tensor<3x3x3x4xf32>) outs(%f2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c2, %c3 : tensor<1x6x6x4xf32>, tensor<1x4x4x4xf32>
}

// -----

// A batch of one whose unit dimension was folded around the padding (collapse, pad,
// expand, as mlxc-fold-unit-extent-dims leaves it), and a depthwise convolution
// (HWC filter, its own callee, no output-channel argument): both read %arg0 in place,
// and the reshapes and the pad go.
// Depthwise arguments: n h w c, kh kw, oh ow, strides, dilations, low padding.
// CHECK-LABEL: func.func @depthwise_batch_of_one
// CHECK-NOT: tensor.pad
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK-DAG: %[[X:.*]] = bufferization.to_buffer %arg0 read_only : tensor<1x7x12x19xf32> to memref<1x7x12x19xf32>
// CHECK-DAG: %[[XP:.*]] = memref.reinterpret_cast %[[X]]
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[C19:.*]] = arith.constant 19 : index
// CHECK: call @mlxc_sconv_depthwise(%[[XP]], %{{.*}}, %{{.*}}, %[[C1]], %[[C7]], %[[C12]], %[[C19]], %[[C3]], %[[C3]], %[[C7]], %[[C12]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %{{.*}}) : (memref<f32>, memref<f32>, memref<f32>, index, index, index, index, index, index, index, index, index, index, index, index, index, index, i32) -> ()
// CHECK: func.func private @mlxc_sconv_depthwise(memref<f32>, memref<f32>, memref<f32>, index, index, index, index, index, index, index, index, index, index, index, index, index, index, i32)
func.func @depthwise_batch_of_one(%x: tensor<1x7x12x19xf32>, %w: tensor<3x3x19xf32>) -> tensor<1x7x12x19xf32> {
  %zero = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<1x7x12x19xf32> into tensor<7x12x19xf32>
  %p = tensor.pad %c low[1, 1, 0] high[1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<7x12x19xf32> to tensor<9x14x19xf32>
  %e = tensor.expand_shape %p [[0, 1], [2], [3]] output_shape [1, 9, 14, 19] : tensor<9x14x19xf32> into tensor<1x9x14x19xf32>
  %o = tensor.empty() : tensor<1x7x12x19xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x7x12x19xf32>) -> tensor<1x7x12x19xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%e, %w : tensor<1x9x14x19xf32>, tensor<3x3x19xf32>) outs(%f : tensor<1x7x12x19xf32>) -> tensor<1x7x12x19xf32>
  return %r : tensor<1x7x12x19xf32>
}

// -----

// An OIHW filter made HWIO by a transpose (as mlxc-conv-nhwc-layout leaves an NCHW
// convolution): the call reads %arg1 itself, O I H W = 4 3 3 3 stored with strides
// 27 9 3 1, so along H W I O the strides are 3 1 9 27; the transpose goes.
// CHECK-LABEL: func.func @transposed_filter
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[W:.*]] = bufferization.to_buffer %arg1 read_only : tensor<4x3x3x3xf32> to memref<4x3x3x3xf32>
// CHECK-DAG: %[[WP:.*]] = memref.reinterpret_cast %[[W]]
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C9:.*]] = arith.constant 9 : index
// CHECK-DAG: %[[C27:.*]] = arith.constant 27 : index
// CHECK: call @mlxc_sconv(%{{.*}}, %[[WP]], {{.*}}, %[[C3]], %[[C1]], %[[C9]], %[[C27]], %{{[^,]*}}) :
#oihw = affine_map<(h, w, i, o) -> (o, i, h, w)>
#hwio = affine_map<(h, w, i, o) -> (h, w, i, o)>
func.func @transposed_filter(%x: tensor<2x5x6x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x3x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x3x3x4xf32>
  %t = linalg.generic {indexing_maps = [#oihw, #hwio], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : tensor<4x3x3x3xf32>) outs(%e : tensor<3x3x3x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x3x3x4xf32>
  %o = tensor.empty() : tensor<2x3x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %t : tensor<2x5x6x3xf32>, tensor<3x3x3x4xf32>) outs(%f : tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %c : tensor<2x3x4x4xf32>
}
