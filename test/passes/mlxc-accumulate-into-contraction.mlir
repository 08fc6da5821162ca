// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-accumulate-into-contraction)' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// tanh(a @ b + c @ d): the second product starts from the first instead of zeros, and
// the elementwise op no longer adds: it reads the sum.
// CHECK-LABEL: func.func @rnn_step
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[P:.*]] = linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[F]] :
// CHECK: %[[Q:.*]] = linalg.matmul ins(%arg2, %arg3 : {{.*}}) outs(%[[P]] :
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[Q]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: math.tanh %[[S]]
func.func @rnn_step(%a: tensor<4x3xf32>, %b: tensor<3x8xf32>, %c: tensor<4x5xf32>, %d: tensor<5x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = linalg.matmul ins(%c, %d : tensor<4x5xf32>, tensor<5x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %q : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Left alone: an addend that is the caller's input, one still used afterwards, a
// product from a non-zero fill, and a product that is also scaled before the add.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.matmul {{.*}} outs(%[[F:[0-9]+]] :
// CHECK: arith.addf
// CHECK: linalg.matmul {{.*}} outs(%[[F]] :
// CHECK: arith.addf
// CHECK: linalg.matmul {{.*}} outs(%[[G:[0-9]+]] :
// CHECK: arith.addf
// CHECK: linalg.matmul {{.*}} outs(%[[F]] :
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
func.func @kept(%a: tensor<4x4xf32>, %x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = linalg.fill ins(%one : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %live = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %p1 = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %p1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %p2 = linalg.matmul ins(%a, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%live, %p2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %p3 = linalg.matmul ins(%x, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%g : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%live, %p3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %dead = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %p4 = linalg.matmul ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dead, %p4 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %v, %v : f32
    %s = arith.addf %u, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r1, %r2, %r3, %r4, %live : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
