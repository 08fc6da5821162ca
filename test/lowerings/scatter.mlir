// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// A scatter-add becomes a loop over the scatter positions carrying the result, a bounds
// check of the whole window per position, and a loop over the window that adds with
// one arith op and inserts in place.
// CHECK-LABEL: func.func @add_rows
// CHECK-SAME: (%[[X:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<5x1xi32>, %[[U:.*]]: tensor<5x4xf32>)
// CHECK-NOT: stablehlo.scatter
// CHECK: %[[R:.*]] = scf.for %[[P:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[X]])
// CHECK:   %[[RAW:.*]] = tensor.extract %[[I]][%[[P]], %{{.*}}] : tensor<5x1xi32>
// CHECK:   %[[S:.*]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK:   arith.cmpi sge, %[[S]]
// CHECK:   %[[FITS:.*]] = arith.cmpi sle, %[[S]], %[[LAST:.*]] : index
// CHECK:   scf.if {{.*}} -> (tensor<10x4xf32>)
// CHECK:     scf.for %[[W:.*]] = {{.*}} iter_args(%[[ACC2:.*]] = %[[ACC]])
// CHECK:       %[[OLD:.*]] = tensor.extract %[[ACC2]][%[[S]], %[[W]]]
// CHECK:       %[[NEW:.*]] = tensor.extract %[[U]][%[[P]], %[[W]]]
// CHECK:       %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]] : f32
// CHECK:       tensor.insert %[[SUM]] into %[[ACC2]][%[[S]], %[[W]]]
// CHECK:   } else {
// CHECK-NEXT: scf.yield %[[ACC]]
// CHECK: return %[[R]]
func.func @add_rows(%x: tensor<10x4xf32>, %i: tensor<5x1xi32>, %u: tensor<5x4xf32>) -> tensor<10x4xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0],
      index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<10x4xf32>, tensor<5x1xi32>, tensor<5x4xf32>) -> tensor<10x4xf32>
  return %r : tensor<10x4xf32>
}

// -----

// A set inserts the update itself; the bound is the last start that fits (7 of 8).
// CHECK-LABEL: func.func @set
// CHECK: %[[C7:.*]] = arith.constant 7 : index
// CHECK: arith.cmpi sle, %{{.*}}, %[[C7]]
// CHECK: %[[NEW:.*]] = tensor.extract %arg2
// CHECK-NOT: arith.addf
// CHECK: tensor.insert %[[NEW]] into
func.func @set(%x: tensor<8xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>) -> tensor<8xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<8xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Unsigned elements: the loops work on signless views (bitcasts that vanish after
// legalization) so that arith applies, with the unsigned max; unsigned indices are
// widened to i64 first.
// CHECK-LABEL: func.func @unsigned
// CHECK-DAG: %[[WIDE:.*]] = stablehlo.convert %arg1 : (tensor<3xui8>) -> tensor<3xi64>
// CHECK-DAG: %[[X:.*]] = stablehlo.bitcast_convert %arg0 : (tensor<8xui32>) -> tensor<8xi32>
// CHECK-DAG: %[[U:.*]] = stablehlo.bitcast_convert %arg2 : (tensor<3xui32>) -> tensor<3xi32>
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[X]]) -> (tensor<8xi32>)
// CHECK:   tensor.extract %[[WIDE]]
// CHECK:   %[[OLD:.*]] = tensor.extract %[[ACC]]
// CHECK:   %[[NEW:.*]] = tensor.extract %[[U]]
// CHECK:   %[[M:.*]] = arith.maxui %[[OLD]], %[[NEW]] : i32
// CHECK:   tensor.insert %[[M]]
// CHECK: %[[OUT:.*]] = stablehlo.bitcast_convert %[[R]] : (tensor<8xi32>) -> tensor<8xui32>
// CHECK: return %[[OUT]]
func.func @unsigned(%x: tensor<8xui32>, %i: tensor<3xui8>, %u: tensor<3xui32>) -> tensor<8xui32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<ui32>, %b: tensor<ui32>):
    %m = stablehlo.maximum %a, %b : tensor<ui32>
    stablehlo.return %m : tensor<ui32>
  }) : (tensor<8xui32>, tensor<3xui8>, tensor<3xui32>) -> tensor<8xui32>
  return %r : tensor<8xui32>
}

// -----

// An update computation of several ops is moved into the loop as it is, on rank-0
// tensors that stablehlo-legalize-to-linalg lowers later.
// CHECK-LABEL: func.func @general
// CHECK: scf.for
// CHECK:   %[[A:.*]] = tensor.from_elements %{{.*}} : tensor<f32>
// CHECK:   %[[B:.*]] = tensor.from_elements %{{.*}} : tensor<f32>
// CHECK:   %[[S:.*]] = stablehlo.sine %[[B]] : tensor<f32>
// CHECK:   %[[P:.*]] = stablehlo.multiply %[[A]], %[[S]] : tensor<f32>
// CHECK:   %[[E:.*]] = tensor.extract %[[P]][] : tensor<f32>
// CHECK:   tensor.insert %[[E]]
func.func @general(%x: tensor<8xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>) -> tensor<8xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.sine %b : tensor<f32>
    %p = stablehlo.multiply %a, %s : tensor<f32>
    stablehlo.return %p : tensor<f32>
  }) : (tensor<8xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A batching dimension indexes the operand with the loop's own position, unchecked.
// CHECK-LABEL: func.func @batching
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK:   scf.for %[[P:[^ ]*]] =
// CHECK:     %[[RAW:.*]] = tensor.extract %arg1[%[[B]], %[[P]], %{{.*}}] : tensor<2x4x1xi64>
// CHECK:     %[[S:.*]] = arith.index_cast %[[RAW]]
// CHECK:     tensor.extract %{{.*}}[%[[B]], %[[S]]] : tensor<2x6xf32>
// CHECK:     tensor.extract %arg2[%[[B]], %[[P]]] : tensor<2x4xf32>
// CHECK:     arith.addf
func.func @batching(%x: tensor<2x6xf32>, %i: tensor<2x4x1xi64>, %u: tensor<2x4xf32>) -> tensor<2x6xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0],
      scatter_dims_to_operand_dims = [1], index_vector_dim = 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x6xf32>, tensor<2x4x1xi64>, tensor<2x4xf32>) -> tensor<2x6xf32>
  return %r : tensor<2x6xf32>
}

// -----

// Several operands: one result tensor carried per operand, each updated in place.
// CHECK-LABEL: func.func @variadic
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[A:.*]] = %arg0, %[[B:.*]] = %arg1)
// CHECK:   arith.minimumf
// CHECK:   arith.maxsi
// CHECK:   tensor.insert {{.*}} : tensor<4xf32>
// CHECK:   tensor.insert {{.*}} : tensor<4xi32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @variadic(%a: tensor<4xf32>, %b: tensor<4xi32>, %i: tensor<2x1xi32>,
                    %ua: tensor<2xf32>, %ub: tensor<2xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %r:2 = "stablehlo.scatter"(%a, %b, %i, %ua, %ub) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<i32>, %ux: tensor<f32>, %uy: tensor<i32>):
    %m = stablehlo.minimum %x, %ux : tensor<f32>
    %n = stablehlo.maximum %y, %uy : tensor<i32>
    stablehlo.return %m, %n : tensor<f32>, tensor<i32>
  }) : (tensor<4xf32>, tensor<4xi32>, tensor<2x1xi32>, tensor<2xf32>, tensor<2xi32>)
       -> (tensor<4xf32>, tensor<4xi32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi32>
}

// -----

func.func @dynamic(%x: tensor<?xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{mlxc lowers stablehlo.scatter only with static shapes}}
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<?xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
