// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-recompute-elementwise)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-recompute-elementwise,func.func(linalg-fuse-elementwise-ops),canonicalize,cse)' | FileCheck %s --check-prefix=FUSED

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Softmax: exp(x - max) is read by the sum and by the divide. Each gets its own copy,
// and after fusion no 4x8 temporary is left: the sum recomputes the exponential.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[E1:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 :
// CHECK: math.exp
// CHECK: %[[E2:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 :
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[E1]] :
// CHECK: linalg.generic {{.*}} ins(%[[E2]], %{{.*}} :
// FUSED-LABEL: func.func @softmax
// FUSED: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
// FUSED: math.exp
// FUSED: arith.addf
// FUSED: linalg.generic {{.*}} ins(%arg0, %arg1, %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// FUSED: math.exp
// FUSED: arith.divf
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @softmax(%x: tensor<4x8xf32>, %max: tensor<4xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %r0 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %out = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#res = affine_map<(d0, d1, d2) -> (d0, d1)>

// Not copied: a producer that is also returned (it is stored anyway), one read by a
// contraction (fused into it, it would run once per multiply-add), and one whose
// work is above the limit (three exponentials).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-1: arith.negf
// CHECK-COUNT-3: math.exp
// CHECK-NOT: math.exp
// CHECK-COUNT-1: math.tanh
// CHECK-NOT: math.tanh
// CHECK: return
func.func @kept(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %e0 = tensor.empty() : tensor<4x4xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %abs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%neg : tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.absf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %exp3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = math.exp %a : f32
    %2 = math.exp %1 : f32
    %3 = math.exp %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4x4xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp3, %exp3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %tanh = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.generic {indexing_maps = [#lhs, #rhs, #res], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%tanh, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %plus = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tanh, %mm : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %neg, %abs, %twice, %plus : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Chains: a cheap producer read by copies of its consumer gets a copy per copy, so
// both results below recompute x*x and x*x + x*x: no 16-element temporary is left.
// FUSED-LABEL: func.func @chain
// FUSED-COUNT-2: linalg.generic {{.*}} ins(%arg0 : tensor<16xf32>)
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @chain(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %p1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%sq, %sq : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p1 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p1 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.absf %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  return %r1, %r2 : tensor<16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A producer outside a loop is not copied into the loop's body.
// CHECK-LABEL: func.func @loop
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %{{.*}} :
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %{{.*}} :
func.func @loop(%x: tensor<16xf32>, %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<16xf32> {
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%y, %acc : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %u = arith.addf %a, %c : f32
      linalg.yield %u : f32
    } -> tensor<16xf32>
    %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%y, %s : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %u = arith.mulf %a, %c : f32
      linalg.yield %u : f32
    } -> tensor<16xf32>
    scf.yield %t : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
