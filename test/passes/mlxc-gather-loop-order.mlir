// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-gather-loop-order)' | FileCheck %s

// An embedding's sum over the looked-up rows: the column loop (d1) moves innermost,
// after the reduction over the ids, and linalg.index follows its loop.
// CHECK-DAG: #[[IDS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @embedding_sum
// CHECK: linalg.generic {indexing_maps = [#[[IDS]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-NEXT: ^bb0(%[[ID:.*]]: i32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[COL:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT: tensor.extract %arg0[%[[ROW]], %[[COL]]] : tensor<1000x128xf32>
#ids = affine_map<(d0, d1, d2) -> (d0, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @embedding_sum(%table: tensor<1000x128xf32>, %ids: tensor<32x16xi32>, %init: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %r = linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids : tensor<32x16xi32>) outs(%init : tensor<32x128xf32>) {
  ^bb0(%i: i32, %acc: f32):
    %c = linalg.index 1 : index
    %row = arith.index_cast %i : i32 to index
    %v = tensor.extract %table[%row, %c] : tensor<1000x128xf32>
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<32x128xf32>
  return %r : tensor<32x128xf32>
}

// -----

// Left alone: a reduction that gathers nothing (the CPU schedules order those), and
// a gather with no reduction.
// CHECK-LABEL: func.func @untouched
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel"]
#in3 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @untouched(%x: tensor<8x16x64xf32>, %init: tensor<8x64xf32>, %table: tensor<100x64xf32>,
                     %ids: tensor<8x64xi32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x16x64xf32>) outs(%init : tensor<8x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8x64xi32>) outs(%init : tensor<8x64xf32>) {
  ^bb0(%i: i32, %o: f32):
    %c = linalg.index 1 : index
    %row = arith.index_cast %i : i32 to index
    %v = tensor.extract %table[%row, %c] : tensor<100x64xf32>
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  return %0, %1 : tensor<8x64xf32>, tensor<8x64xf32>
}
