// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-precise-expm1-log1p)' | FileCheck %s

// expm1(x) as XLA computes it: exp(x) - 1 beyond |x| > 1/2 (no digits lost there),
// tanh(x/2) (exp(x) + 1) within, and x itself where x/2 is zero (+-0 keeps its sign).
// CHECK-LABEL: func.func @expm1
// CHECK-NOT: math.expm1
// CHECK: %[[U:.*]] = math.exp %arg0 : f32
// CHECK: %[[H:.*]] = arith.mulf %arg0, %{{.*}} : f32
// CHECK: %[[T:.*]] = math.tanh %[[H]] : f32
// CHECK: %[[UP1:.*]] = arith.addf %[[U]], %{{.*}} : f32
// CHECK: %[[NEAR:.*]] = arith.mulf %[[T]], %[[UP1]] : f32
// CHECK: %[[AWAY:.*]] = arith.subf %[[U]], %{{.*}} : f32
// CHECK: %[[A:.*]] = math.absf %arg0 : f32
// CHECK: %[[FAR:.*]] = arith.cmpf ogt, %[[A]], %{{.*}} : f32
// CHECK: %[[V:.*]] = arith.select %[[FAR]], %[[AWAY]], %[[NEAR]] : f32
// CHECK: %[[Z:.*]] = arith.cmpf oeq, %[[H]], %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.select %[[Z]], %arg0, %[[V]] : f32
// CHECK: return %[[R]]
func.func @expm1(%x: f32) -> f32 {
  %0 = math.expm1 %x : f32
  return %0 : f32
}

// -----

// log1p(x) = log(1 + x) * (x / ((1 + x) - 1)), on vectors too.
// CHECK-LABEL: func.func @log1p
// CHECK-NOT: math.log1p
// CHECK: %[[U:.*]] = arith.addf %arg0, %{{.*}} : vector<8xf64>
// CHECK: %[[L:.*]] = math.log %[[U]] : vector<8xf64>
// CHECK: %[[Q:.*]] = arith.divf %arg0, %{{.*}} : vector<8xf64>
// CHECK: arith.mulf %[[L]], %[[Q]] : vector<8xf64>
// CHECK: arith.cmpf oeq, %[[U]], %{{.*}} : vector<8xf64>
// CHECK: arith.select %{{.*}} : vector<8xi1>, vector<8xf64>
func.func @log1p(%x: vector<8xf64>) -> vector<8xf64> {
  %0 = math.log1p %x : vector<8xf64>
  return %0 : vector<8xf64>
}
