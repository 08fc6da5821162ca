// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-small-float-selects)' | FileCheck %s

// A select of 9 bf16 lanes (LLVM's x86 backend aborts on it) chooses the bits as i16.
// CHECK-LABEL: func.func @vector_bf16
// CHECK: %[[A:.*]] = arith.bitcast %arg1 : vector<9xbf16> to vector<9xi16>
// CHECK: %[[B:.*]] = arith.bitcast %arg2 : vector<9xbf16> to vector<9xi16>
// CHECK: %[[S:.*]] = arith.select %arg0, %[[A]], %[[B]] : vector<9xi1>, vector<9xi16>
// CHECK: %[[R:.*]] = arith.bitcast %[[S]] : vector<9xi16> to vector<9xbf16>
// CHECK: return %[[R]]
func.func @vector_bf16(%c: vector<9xi1>, %a: vector<9xbf16>, %b: vector<9xbf16>) -> vector<9xbf16> {
  %r = arith.select %c, %a, %b : vector<9xi1>, vector<9xbf16>
  return %r : vector<9xbf16>
}

// Scalars and the 8-bit floats too, with a scalar condition; f32 is left alone.
// CHECK-LABEL: func.func @others
// CHECK: arith.select %arg0, %{{.*}}, %{{.*}} : i8
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK: arith.select %arg0, %{{.*}}, %{{.*}} : vector<4xi16>
// CHECK: arith.bitcast %{{.*}} : vector<4xi16> to vector<4xf16>
// CHECK: arith.select %arg0, %arg5, %arg6 : f32
func.func @others(%c: i1, %a: f8E4M3FN, %b: f8E4M3FN, %x: vector<4xf16>, %y: vector<4xf16>, %f: f32, %g: f32) -> (f8E4M3FN, vector<4xf16>, f32) {
  %0 = arith.select %c, %a, %b : f8E4M3FN
  %1 = arith.select %c, %x, %y : vector<4xf16>
  %2 = arith.select %c, %f, %g : f32
  return %0, %1, %2 : f8E4M3FN, vector<4xf16>, f32
}
