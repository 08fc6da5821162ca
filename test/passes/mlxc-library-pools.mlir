// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-library-pools)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --mlxc-pipeline cpu --mlxc-start-after fuse --mlxc-stop-after bufferize | FileCheck %s --check-prefix=BUF

// A SAME 3x3 stride-2 max pool as stablehlo-legalize-to-linalg makes it: a generic over
// an input padded with -inf, from an init of -inf. The call reads the unpadded input
// (%arg0, low padding 0 0), writes a fresh buffer that becomes the result, and the pad
// and the init's fill are gone. Arguments: n h w c, kh kw, oh ow, strides, dilations,
// low padding, kind (0: max), threads.
// CHECK-LABEL: func.func @same_max
// CHECK-NOT: tensor.pad
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[X:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2x8x8x32xf32> to memref<2x8x8x32xf32>
// CHECK-DAG: %[[O:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x4x32xf32>
// CHECK-DAG: %[[XP:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [], strides: [] : memref<2x8x8x32xf32> to memref<f32>
// CHECK-DAG: %[[OP:.*]] = memref.reinterpret_cast %[[O]] to offset: [0], sizes: [], strides: [] : memref<2x4x4x32xf32> to memref<f32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[MAX:.*]] = arith.constant 0 : i32
// CHECK: call @mlxc_spool(%[[XP]], %[[OP]], %[[C2]], %[[C8]], %[[C8]], %[[C32]], %[[C3]], %[[C3]], %[[C4]], %[[C4]], %[[C2]], %[[C2]], %[[C1]], %[[C1]], %[[C0]], %[[C0]], %[[MAX]], %{{.*}}) : (memref<f32>, memref<f32>, index, index, index, index, index, index, index, index, index, index, index, index, index, index, i32, i32) -> ()
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[O]] restrict writable
// CHECK: return %[[R]]
// CHECK: func.func private @mlxc_spool(memref<f32>, memref<f32>, index, index, index, index, index, index, index, index, index, index, index, index, index, index, i32, i32)
// After bufferization the result buffer is the output argument, and no temporary is
// left: no padded copy.
// BUF: module attributes {{{.*}}mlxc.temp_bytes = 0 : i64}
// BUF-LABEL: func.func @same_max(%arg0: memref<2x8x8x32xf32>, %arg1: memref<2x4x4x32xf32>)
// BUF-NOT: memref.alloc
// BUF: %[[OUT:.*]] = memref.reinterpret_cast %arg1
// BUF-NOT: memref.alloc
// BUF: call @mlxc_spool(%{{.*}}, %[[OUT]],
#in = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>
#win = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#out = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
#all = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @same_max(%x: tensor<2x8x8x32xf32>) -> tensor<2x4x4x32xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x4x4x32xf32>
  %init = linalg.generic {indexing_maps = [#all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<2x4x4x32xf32>) {
  ^bb0(%o: f32):
    linalg.yield %ninf : f32
  } -> tensor<2x4x4x32xf32>
  %p = tensor.pad %x low[0, 0, 0, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<2x8x8x32xf32> to tensor<2x9x9x32xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %r = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%p, %w : tensor<2x9x9x32xf32>, tensor<3x3xf32>) outs(%init : tensor<2x4x4x32xf32>) {
  ^bb0(%in: f32, %in_w: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x4x4x32xf32>
  return %r : tensor<2x4x4x32xf32>
}

// -----

// An unpadded sum is a named pooling, from a fill of zeros: kind 1, padding 0, window
// dilation 2 in width. Arguments: 1 7 9 24, 2 2, 6 7, strides 1 1, dilations 1 2.
// CHECK-LABEL: func.func @valid_sum
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C9:.*]] = arith.constant 9 : index
// CHECK-DAG: %[[SUM:.*]] = arith.constant 1 : i32
// CHECK: call @mlxc_spool(%{{.*}}, %{{.*}}, %[[C1]], %[[C7]], %[[C9]], %[[C24]], %[[C2]], %[[C2]], %[[C6]], %[[C7]], %[[C1]], %[[C1]], %[[C1]], %[[C2]], %[[C0]], %[[C0]], %[[SUM]], %{{.*}})
// CHECK-NOT: linalg.pooling_nhwc_sum
// BUF: mlxc.temp_bytes = 0 : i64
// BUF: call @mlxc_spool(
func.func @valid_sum(%x: tensor<1x7x9x24xf32>) -> tensor<1x6x7x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x7x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x7x24xf32>) -> tensor<1x6x7x24xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nhwc_sum {dilations = dense<[1, 2]> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<1x7x9x24xf32>, tensor<2x2xf32>) outs(%f : tensor<1x6x7x24xf32>) -> tensor<1x6x7x24xf32>
  return %r : tensor<1x6x7x24xf32>
}

// -----

// A batch of one folded away (HWC), padded on both sides of the rows only, and a pad
// another op also reads: it stays for that op, the call still reads the unpadded
// input. Arguments: n 1, 6 5 16, 3 1, 6 5, strides 1 1, low padding 1 0.
// CHECK-LABEL: func.func @folded_batch
// CHECK: %[[P:.*]] = tensor.pad %arg0
// CHECK: %[[X:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: call @mlxc_spool(
// CHECK: return %{{.*}}, %[[P]]
#in3 = affine_map<(d0, d1, d2, d3) -> (d0 + d3, d1, d2)>
#win3 = affine_map<(d0, d1, d2, d3) -> (d3)>
#out3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @folded_batch(%x: tensor<6x5x16xf32>) -> (tensor<6x5x16xf32>, tensor<8x5x16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<6x5x16xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<6x5x16xf32>) -> tensor<6x5x16xf32>
  %p = tensor.pad %x low[1, 0, 0] high[1, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %ninf : f32
  } : tensor<6x5x16xf32> to tensor<8x5x16xf32>
  %w = tensor.empty() : tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#in3, #win3, #out3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %w : tensor<8x5x16xf32>, tensor<3xf32>) outs(%init : tensor<6x5x16xf32>) {
  ^bb0(%in: f32, %in_w: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<6x5x16xf32>
  return %r, %p : tensor<6x5x16xf32>, tensor<8x5x16xf32>
}

// -----

// A max padded with zeros, which are no identity of max: the padded copy is made and
// the call reads it whole (5 x 5, no padding of its own).
// CHECK-LABEL: func.func @zero_padded_max
// CHECK: %[[P:.*]] = tensor.pad %arg0
// CHECK: bufferization.to_buffer %[[P]] read_only
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK: call @mlxc_spool(%{{.*}}, %{{.*}}, %{{.*}}, %[[C5]], %[[C5]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C0]], %[[C0]],
// BUF-LABEL: func.func @zero_padded_max
// BUF: memref.alloc() {alignment = 64 : i64} : memref<1x5x5x16xf32>
// BUF: call @mlxc_spool(
#in = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 + d5, d3)>
#win = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#out = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
func.func @zero_padded_max(%x: tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %w = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %i1 = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x16xf32> to tensor<1x5x5x16xf32>
  %r1 = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%p, %w : tensor<1x5x5x16xf32>, tensor<2x2xf32>) outs(%i1 : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %in_w: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  return %r1 : tensor<1x4x4x16xf32>
}

// -----

// What keeps its generated code: a max from 1 (not the identity), a minimum, f16,
// and (last) a pool of fewer than 16 channels after its window's dims (NCHW).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: call @mlxc_spool
// CHECK-COUNT-4: linalg.generic {{.*}}"reduction", "reduction"
// CHECK-NOT: call @mlxc_spool
#in = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 + d5, d3)>
#win = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#out = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
#nchw = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
func.func @kept(%x: tensor<1x4x4x16xf32>, %h: tensor<1x5x5x16xf16>, %c: tensor<1x16x4x4xf32>)
    -> (tensor<1x3x3x16xf32>, tensor<1x3x3x16xf32>, tensor<1x4x4x16xf16>, tensor<1x16x3x3xf32>) {
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inf = arith.constant 0x7F800000 : f32
  %hninf = arith.constant 0xFC00 : f16
  %w = tensor.empty() : tensor<2x2xf32>
  %e3 = tensor.empty() : tensor<1x3x3x16xf32>
  %eh = tensor.empty() : tensor<1x4x4x16xf16>
  %i2 = linalg.fill ins(%one : f32) outs(%e3 : tensor<1x3x3x16xf32>) -> tensor<1x3x3x16xf32>
  %r2 = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x4x4x16xf32>, tensor<2x2xf32>) outs(%i2 : tensor<1x3x3x16xf32>) {
  ^bb0(%in: f32, %in_w: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x3x3x16xf32>
  %i3 = linalg.fill ins(%inf : f32) outs(%e3 : tensor<1x3x3x16xf32>) -> tensor<1x3x3x16xf32>
  %r3 = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x4x4x16xf32>, tensor<2x2xf32>) outs(%i3 : tensor<1x3x3x16xf32>) {
  ^bb0(%in: f32, %in_w: f32, %acc: f32):
    %m = arith.minimumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x3x3x16xf32>
  %i4 = linalg.fill ins(%hninf : f16) outs(%eh : tensor<1x4x4x16xf16>) -> tensor<1x4x4x16xf16>
  %r4 = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%h, %w : tensor<1x5x5x16xf16>, tensor<2x2xf32>) outs(%i4 : tensor<1x4x4x16xf16>) {
  ^bb0(%in: f16, %in_w: f32, %acc: f16):
    %m = arith.maximumf %acc, %in : f16
    linalg.yield %m : f16
  } -> tensor<1x4x4x16xf16>
  %ec = tensor.empty() : tensor<1x16x3x3xf32>
  %i5 = linalg.fill ins(%ninf : f32) outs(%ec : tensor<1x16x3x3xf32>) -> tensor<1x16x3x3xf32>
  %r5 = linalg.generic {indexing_maps = [#nchw, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%c, %w : tensor<1x16x4x4xf32>, tensor<2x2xf32>) outs(%i5 : tensor<1x16x3x3xf32>) {
  ^bb0(%in: f32, %in_w: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x16x3x3xf32>
  return %r2, %r3, %r4, %r5 : tensor<1x3x3x16xf32>, tensor<1x3x3x16xf32>, tensor<1x4x4x16xf16>, tensor<1x16x3x3xf32>
}
