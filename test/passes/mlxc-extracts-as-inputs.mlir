// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-extracts-as-inputs)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-extracts-as-inputs,func.func(linalg-fuse-elementwise-ops),canonicalize,cse)' | FileCheck %s --check-prefix=FUSED

#id = affine_map<(d0, d1) -> (d0, d1)>
#vec = affine_map<(d0) -> (d0)>

// take_along_axis(x, labels[:, None]): the label of row i is read at the loop's own row
// index, and the wrap of negative labels before it is a buffer of its own. As an input
// under (d0, d1) -> (d0), the wrap fuses; the data-dependent read of x stays an extract.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @pick
// CHECK: %[[W:.*]] = linalg.generic
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[W]] : tensor<4xi32>)
// CHECK-NEXT: ^bb0(%[[L:.*]]: i32, %{{.*}}: f32):
// CHECK-NOT: tensor.extract %[[W]]
// CHECK: arith.index_cast %[[L]]
// CHECK: tensor.extract %arg0
// FUSED-LABEL: func.func @pick
// FUSED: linalg.generic {{.*}} ins(%arg1 : tensor<4xi32>)
// FUSED: arith.addi
// FUSED: arith.select
// FUSED: tensor.extract %arg0
// FUSED-NOT: linalg.generic
func.func @pick(%x: tensor<4x10xf32>, %labels: tensor<4xi32>) -> tensor<4x1xf32> {
  %c10 = arith.constant 10 : i32
  %c0i = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4xi32>
  %w = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%labels : tensor<4xi32>) outs(%e : tensor<4xi32>) {
  ^bb0(%l: i32, %o: i32):
    %neg = arith.cmpi slt, %l, %c0i : i32
    %up = arith.addi %l, %c10 : i32
    %s = arith.select %neg, %up, %l : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  %e2 = tensor.empty() : tensor<4x1xf32>
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e2 : tensor<4x1xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %l = tensor.extract %w[%i] : tensor<4xi32>
    %j = arith.index_cast %l : i32 to index
    %v = tensor.extract %x[%i, %j] : tensor<4x10xf32>
    linalg.yield %v : f32
  } -> tensor<4x1xf32>
  return %r : tensor<4x1xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Constant indices become constant map results; an index out of the dimension, or one
// computed from the loop index, stays an extract.
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1) -> (d1, 2)>
// CHECK-LABEL: func.func @constants
// FUSED-LABEL: func.func @constants
// CHECK: linalg.generic {indexing_maps = [#[[C]], #{{.*}}], {{.*}} ins(%arg0 : tensor<3x4xf32>)
// CHECK: tensor.extract %arg0[%{{.*}}, %c7]
// CHECK: tensor.extract %arg0[%{{.*}}, %{{.*}}]
// CHECK-NOT: tensor.extract
func.func @constants(%t: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<2x3xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 1 : index
    %a = tensor.extract %t[%j, %c2] : tensor<3x4xf32>
    %b = tensor.extract %t[%j, %c7] : tensor<3x4xf32>
    %k = arith.addi %j, %c1 : index
    %c = tensor.extract %t[%k, %c2] : tensor<3x4xf32>
    %s = arith.addf %a, %b : f32
    %u = arith.addf %s, %c : f32
    linalg.yield %u : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

#vec = affine_map<(d0) -> (d0)>

// A loop longer than the dimension it indexes (a read the program guards elsewhere)
// would not verify as an input: it stays an extract.
// CHECK-LABEL: func.func @longer_loop
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel"]} outs(
// CHECK: tensor.extract %arg0
func.func @longer_loop(%t: tensor<4xf32>) -> tensor<8xf32> {
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#vec], iterator_types = ["parallel"]}
      outs(%e : tensor<8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = arith.minui %i, %c3 : index
    %a = tensor.extract %t[%i] : tensor<4xf32>
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A loop shorter than the dimension it reads (the first 2 of 10 values) would not verify
// either: linalg infers the loop's trip count from the new input.
// CHECK-LABEL: func.func @shorter_loop
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(
// CHECK: tensor.extract %arg0
func.func @shorter_loop(%t: tensor<10xi8>) -> tensor<3x2xi8> {
  %e = tensor.empty() : tensor<3x2xi8>
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<3x2xi8>) {
  ^bb0(%o: i8):
    %j = linalg.index 1 : index
    %a = tensor.extract %t[%j] : tensor<10xi8>
    linalg.yield %a : i8
  } -> tensor<3x2xi8>
  return %r : tensor<3x2xi8>
}

// -----

#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#w = affine_map<(d0, d1, d2) -> (d0, d2)>

// An embedding's weighted sum: the id of (row, k) indexes the table, and it is the same
// in every lane of the column loop (d1) the vectorizer runs along. Read as an extract the
// vectorizer sees that and loads table rows whole; as an input it would gather one
// element per lane. It stays an extract.
// CHECK-LABEL: func.func @embedding
// CHECK: linalg.generic {{.*}} ins(%arg2 : tensor<4x8xf32>)
// CHECK: tensor.extract %arg1
// CHECK: tensor.extract %arg0
func.func @embedding(%table: tensor<100x16xf32>, %ids: tensor<4x8xi32>, %wt: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#w, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%wt : tensor<4x8xf32>) outs(%f : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %b = linalg.index 0 : index
    %c = linalg.index 1 : index
    %k = linalg.index 2 : index
    %id = tensor.extract %ids[%b, %k] : tensor<4x8xi32>
    %row = arith.index_cast %id : i32 to index
    %v = tensor.extract %table[%row, %c] : tensor<100x16xf32>
    %m = arith.mulf %x, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
