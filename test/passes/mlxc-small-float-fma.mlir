// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-small-float-fma{force=true})' | FileCheck %s

// a * b - c on f16: one math.fma with c negated; c - a * b: a negated. A product
// with a second use, and bf16, stay as they are.
// CHECK-LABEL: func.func @contract
// CHECK: %[[N:.*]] = arith.negf %arg2 : vector<8xf16>
// CHECK: %[[F:.*]] = math.fma %arg0, %arg1, %[[N]] : vector<8xf16>
// CHECK: %[[M:.*]] = arith.negf %arg0 : vector<8xf16>
// CHECK: math.fma %[[M]], %arg1, %arg2 : vector<8xf16>
// CHECK: %[[P:.*]] = arith.mulf %arg0, %arg2 : vector<8xf16>
// CHECK: arith.addf %[[P]], %arg1 : vector<8xf16>
// CHECK: arith.mulf {{.*}} : vector<8xbf16>
// CHECK: arith.addf {{.*}} : vector<8xbf16>
func.func @contract(%a: vector<8xf16>, %b: vector<8xf16>, %c: vector<8xf16>, %x: vector<8xbf16>)
    -> (vector<8xf16>, vector<8xf16>, vector<8xf16>, vector<8xf16>, vector<8xbf16>) {
  %p = arith.mulf %a, %b : vector<8xf16>
  %0 = arith.subf %p, %c : vector<8xf16>
  %q = arith.mulf %a, %b : vector<8xf16>
  %1 = arith.subf %c, %q : vector<8xf16>
  %r = arith.mulf %a, %c : vector<8xf16>
  %2 = arith.addf %r, %b : vector<8xf16>
  %s = arith.mulf %x, %x : vector<8xbf16>
  %3 = arith.addf %s, %x : vector<8xbf16>
  return %0, %1, %2, %r, %3 : vector<8xf16>, vector<8xf16>, vector<8xf16>, vector<8xf16>, vector<8xbf16>
}
