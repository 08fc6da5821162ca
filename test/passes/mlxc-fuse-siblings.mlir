// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-fuse-siblings)' | FileCheck %s

// An Adam-like step: m', v' and p' read g; p' also reads m' and v' at its own element.
// One op with three results, each input read once.
// CHECK-LABEL: func.func @adam
// CHECK: %[[R:.*]]:3 = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 : {{.*}}) outs(
// CHECK: linalg.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @adam(%g: tensor<4x8xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %b = arith.constant 0.9 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %m1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%g, %m : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = arith.mulf %y, %b : f32
    %1 = arith.addf %0, %x : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %v1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%g, %v : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = arith.mulf %x, %x : f32
    %1 = arith.addf %0, %y : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%m1, %v1, %g : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
    %0 = arith.divf %x, %y : f32
    %1 = arith.subf %z, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  return %m1, %v1, %p : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The second op reads the first one's result at another element (a transpose): a
// true dependency, and they share no input otherwise: left alone.
// CHECK-LABEL: func.func @transposed_read
// CHECK: linalg.generic
// CHECK: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_read(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e0 = tensor.empty() : tensor<8x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%e0 : tensor<8x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %0 = arith.mulf %i, %i : f32
    linalg.yield %0 : f32
  } -> tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<8x8xf32>
  %b = linalg.generic {indexing_maps = [#tr, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e1 : tensor<8x8xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %0 = arith.addf %i, %j : f32
    linalg.yield %0 : f32
  } -> tensor<8x8xf32>
  return %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
}
