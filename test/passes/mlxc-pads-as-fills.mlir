// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-pads-as-fills)' | FileCheck %s

// A padded transposed input: the padded tensor is filled before the transpose, which
// then writes into its interior once eliminate-empty-tensors has run.
// CHECK-LABEL: func.func @transposed_input(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x6x5xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<2x6x5xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[P:.*]] = tensor.insert_slice %[[T]] into %[[F]][0, 1, 1] [2, 4, 3] [1, 1, 1] : tensor<2x4x3xf32> into tensor<2x6x5xf32>
// CHECK: return %[[P]]
func.func @transposed_input(%x: tensor<2x3x4xf32>) -> tensor<2x6x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x3xf32>
  %t = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<2x4x3xf32>) permutation = [0, 2, 1]
  %p = tensor.pad %t low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<2x4x3xf32> to tensor<2x6x5xf32>
  return %p : tensor<2x6x5xf32>
}

// -----

// Left as pads: a source computed from a temporary (both padded buffers would be alive
// at once), a padding value that depends on the index, and a function argument (no
// producer to write into the padded buffer).
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-3: tensor.pad
// CHECK-NOT: linalg.fill
#id = affine_map<(d0) -> (d0)>
func.func @kept(%x: tensor<4xf32>) -> (tensor<8xf32>, tensor<6xf32>, tensor<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %pd = tensor.pad %d low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<6xf32>
  %e2 = tensor.empty() : tensor<6xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%pd : tensor<6xf32>) outs(%e2 : tensor<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %pi = tensor.pad %sq low[1] high[1] {
  ^bb0(%i: index):
    %f = arith.index_cast %i : index to i32
    %v = arith.sitofp %f : i32 to f32
    tensor.yield %v : f32
  } : tensor<6xf32> to tensor<8xf32>
  %pa = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %pi, %pd, %pa : tensor<8xf32>, tensor<6xf32>, tensor<6xf32>
}
