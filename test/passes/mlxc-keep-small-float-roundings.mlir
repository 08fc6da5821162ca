// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-keep-small-float-roundings)' | FileCheck %s
// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-keep-small-float-roundings,canonicalize)' | FileCheck %s --check-prefix=FOLD

// The emulation's casts lose `contract` (so canonicalize keeps the rounding between
// the two ops); casts between f32 and f64 keep it.
// CHECK-LABEL: func.func @main
// CHECK: %[[S:.*]] = arith.subf
// CHECK: %[[T:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK: %[[E:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: arith.truncf %{{.*}} fastmath<contract> : f64 to f32
// FOLD-LABEL: func.func @main
// FOLD: arith.truncf %{{.*}} : f32 to f16
// FOLD: arith.extf %{{.*}} : f16 to f32
func.func @main(%a: f32, %b: f32, %v: vector<4xf32>, %d: f64) -> (f32, vector<4xbf16>, f32) {
  %0 = arith.subf %a, %b : f32
  %1 = arith.truncf %0 fastmath<contract> : f32 to f16
  %2 = arith.extf %1 fastmath<contract> : f16 to f32
  %3 = math.exp %2 : f32
  %4 = arith.truncf %v fastmath<contract> : vector<4xf32> to vector<4xbf16>
  %5 = arith.truncf %d fastmath<contract> : f64 to f32
  %6 = arith.addf %3, %5 : f32
  return %6, %4, %5 : f32, vector<4xbf16>, f32
}
