// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-blocked-transposes)' | FileCheck %s

#in2 = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A transpose moving the contiguous dimension far from the next: split into blocks of
// 8, the block loop outside the rows it writes (f64: no register-tiled schedule).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matrix
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [512, 32, 8] : tensor<512x256xf64> into tensor<512x32x8xf64>
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<512x32x8xf64>) outs(%{{.*}} : tensor<32x8x512xf64>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: linalg.yield %[[A]] : f64
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[T]] {{\[}}[0, 1], [2]] : tensor<32x8x512xf64> into tensor<256x512xf64>
// CHECK: return %[[R]]
func.func @matrix(%x: tensor<512x256xf64>) -> tensor<256x512xf64> {
  %e = tensor.empty() : tensor<256x512xf64>
  %0 = linalg.generic {indexing_maps = [#in2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<512x256xf64>) outs(%e : tensor<256x512xf64>) {
  ^bb0(%a: f64, %b: f64):
    linalg.yield %a : f64
  } -> tensor<256x512xf64>
  return %0 : tensor<256x512xf64>
}

// -----

#in4 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// NHWC -> NCHW: the channel block sits where the channels go; a length divisible by 4
// only gets blocks of 4. (With a width of 16 the CPU schedule's 8x20 register tiles
// would take it; 15 x 20 has no side of 8.)
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4, d1, d2)>
// CHECK-LABEL: func.func @nhwc_to_nchw
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1], [2], [3, 4]] output_shape [2, 15, 15, 5, 4] : tensor<2x15x15x20xf32> into tensor<2x15x15x5x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], {{.*}}]{{.*}} outs(%{{.*}} : tensor<2x5x4x15x15xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] : tensor<2x5x4x15x15xf32> into tensor<2x20x15x15xf32>
func.func @nhwc_to_nchw(%x: tensor<2x15x15x20xf32>) -> tensor<2x20x15x15xf32> {
  %e = tensor.empty() : tensor<2x20x15x15xf32>
  %0 = linalg.generic {indexing_maps = [#in4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x15x15x20xf32>) outs(%e : tensor<2x20x15x15xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<2x20x15x15xf32>
  return %0 : tensor<2x20x15x15xf32>
}

// -----

#in2 = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#in3 = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Left alone: the contiguous dimension stays last; it is 8 long; it has no divisor 4
// or 8; the rows written are close (16 f32 apart); booleans; a transpose that also
// computes; a 32-bit transpose whose dimensions are multiples of 8 (the CPU schedule
// transposes 8x8 tiles in registers).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: tensor.expand_shape
func.func @untouched(%a: tensor<4x8x32xf32>, %b: tensor<512x8xf32>, %c: tensor<64x10xf32>,
                     %d: tensor<16x64xf32>, %e: tensor<64x64xi1>, %f: tensor<64x64xf32>,
                     %g: tensor<512x256xf32>)
    -> (tensor<8x4x32xf32>, tensor<8x512xf32>, tensor<10x64xf32>, tensor<64x16xf32>,
        tensor<64x64xi1>, tensor<64x64xf32>, tensor<256x512xf32>) {
  %ea = tensor.empty() : tensor<8x4x32xf32>
  %0 = linalg.generic {indexing_maps = [#in3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<4x8x32xf32>) outs(%ea : tensor<8x4x32xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<8x4x32xf32>
  %eb = tensor.empty() : tensor<8x512xf32>
  %1 = linalg.generic {indexing_maps = [#in2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<512x8xf32>) outs(%eb : tensor<8x512xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<8x512xf32>
  %ec = tensor.empty() : tensor<10x64xf32>
  %2 = linalg.generic {indexing_maps = [#in2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<64x10xf32>) outs(%ec : tensor<10x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<10x64xf32>
  %ed = tensor.empty() : tensor<64x16xf32>
  %3 = linalg.generic {indexing_maps = [#in2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<16x64xf32>) outs(%ed : tensor<64x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<64x16xf32>
  %ee = tensor.empty() : tensor<64x64xi1>
  %4 = linalg.generic {indexing_maps = [#in2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<64x64xi1>) outs(%ee : tensor<64x64xi1>) {
  ^bb0(%x: i1, %y: i1):
    linalg.yield %x : i1
  } -> tensor<64x64xi1>
  %ef = tensor.empty() : tensor<64x64xf32>
  %5 = linalg.generic {indexing_maps = [#in2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%f : tensor<64x64xf32>) outs(%ef : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<64x64xf32>
  %eg = tensor.empty() : tensor<256x512xf32>
  %6 = linalg.generic {indexing_maps = [#in2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<512x256xf32>) outs(%eg : tensor<256x512xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<256x512xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<8x4x32xf32>, tensor<8x512xf32>, tensor<10x64xf32>, tensor<64x16xf32>, tensor<64x64xi1>, tensor<64x64xf32>, tensor<256x512xf32>
}
