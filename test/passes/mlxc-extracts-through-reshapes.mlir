// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-extracts-through-reshapes)' | FileCheck %s

// A gather's ids as [N, 1]: the extract reads the 1-D ids at the same row.
// CHECK-LABEL: func.func @take
// CHECK: linalg.generic
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: tensor.extract %arg1[%[[J]]] : tensor<100xi32>
func.func @take(%x: tensor<6x512xf32>, %ids: tensor<100xi32>) -> tensor<6x100xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.expand_shape %ids [[0, 1]] output_shape [100, 1] : tensor<100xi32> into tensor<100x1xi32>
  %o = tensor.empty() : tensor<6x100xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%o : tensor<6x100xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %id = tensor.extract %e[%j, %c0] : tensor<100x1xi32>
    %k = arith.index_cast %id : i32 to index
    %v = tensor.extract %x[%i, %k] : tensor<6x512xf32>
    linalg.yield %v : f32
  } -> tensor<6x100xf32>
  return %r : tensor<6x100xf32>
}

// An expansion with two non-unit dimensions in one group is a real reshape: unchanged.
// CHECK-LABEL: func.func @reshape
// CHECK: tensor.extract %expanded
func.func @reshape(%a: tensor<12xf32>, %i: index, %j: index) -> f32 {
  %e = tensor.expand_shape %a [[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
  %v = tensor.extract %e[%i, %j] : tensor<3x4xf32>
  return %v : f32
}
