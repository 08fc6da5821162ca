// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-precise-expm1-log1p)' | FileCheck %s

// expm1(x) = (exp(x) - 1) * (x / log(exp(x))), with x itself when exp(x) rounds to 1;
// the quotient first, so that large x does not overflow.
// CHECK-LABEL: func.func @expm1
// CHECK-NOT: math.expm1
// CHECK: %[[U:.*]] = math.exp %arg0 : f32
// CHECK: %[[UM1:.*]] = arith.subf %[[U]], %{{.*}} : f32
// CHECK: %[[L:.*]] = math.log %[[U]] : f32
// CHECK: %[[Q:.*]] = arith.divf %arg0, %[[L]] : f32
// CHECK: %[[P:.*]] = arith.mulf %[[UM1]], %[[Q]] : f32
// CHECK: arith.cmpf oeq, %[[U]]
// CHECK: %[[R:.*]] = arith.select %{{.*}}, %arg0, %{{.*}} : f32
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
