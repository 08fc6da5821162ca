// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-expand-small-float-casts)' | FileCheck %s

// extf reads a table of the type's 256 values (0, 2^-9, ... as f32 bits), indexed by the
// operand's bits.
// CHECK: memref.global "private" constant @__mlxc_f8E4M3FN_f32_values : memref<256xf32> = dense<"0x000000000000003B
// CHECK-LABEL: func.func @extend
// CHECK: %[[CODE:.*]] = arith.bitcast %arg0 : f8E4M3FN to i8
// CHECK: %[[WIDE:.*]] = arith.extui %[[CODE]] : i8 to i32
// CHECK: %[[TABLE:.*]] = memref.get_global @__mlxc_f8E4M3FN_f32_values : memref<256xf32>
// CHECK: %[[I:.*]] = arith.index_cast %[[WIDE]] : i32 to index
// CHECK: %[[V:.*]] = memref.load %[[TABLE]][%[[I]]] : memref<256xf32>
// CHECK: %[[V2:.*]] = memref.load
// CHECK: %[[D:.*]] = arith.extf %[[V2]] : f32 to f64
// CHECK: return %[[V]], %[[D]]
func.func @extend(%x: f8E4M3FN) -> (f32, f64) {
  %0 = arith.extf %x : f8E4M3FN to f32
  %1 = arith.extf %x : f8E4M3FN to f64
  return %0, %1 : f32, f64
}

// truncf rounds to nearest even at the type's precision, then encodes the bits.
// CHECK-LABEL: func.func @truncate
// CHECK: math.absf %arg0 : f32
// CHECK: math.roundeven
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %arg0, %arg0 : f32
// CHECK: %[[BITS:.*]] = arith.select %[[NAN]], {{.*}} : i4
// CHECK: %[[R:.*]] = arith.bitcast %[[BITS]] : i4 to f4E2M1FN
// CHECK-NOT: arith.truncf %arg0
// CHECK: arith.truncf %arg1 : f32 to f16
// CHECK: return %[[R]]
func.func @truncate(%x: f32, %y: f32) -> (f4E2M1FN, f16) {
  %0 = arith.truncf %x : f32 to f4E2M1FN
  %1 = arith.truncf %y : f32 to f16
  return %0, %1 : f4E2M1FN, f16
}

// A vector converts element by element.
// CHECK-LABEL: func.func @vector
// CHECK: %[[E0:.*]] = vector.extract %arg0[0] : f8E5M2 from vector<2xf8E5M2>
// CHECK: arith.bitcast %[[E0]] : f8E5M2 to i8
// CHECK: %[[V0:.*]] = vector.insert %{{.*}}, %{{.*}} [0] : f32 into vector<2xf32>
// CHECK: %[[E1:.*]] = vector.extract %arg0[1]
// CHECK: %[[V1:.*]] = vector.insert %{{.*}}, %[[V0]] [1] : f32 into vector<2xf32>
// CHECK: return %[[V1]]
func.func @vector(%x: vector<2xf8E5M2>) -> vector<2xf32> {
  %0 = arith.extf %x : vector<2xf8E5M2> to vector<2xf32>
  return %0 : vector<2xf32>
}

// f8E8M0FNU (powers of two, no sign, no zero) rounds on the exponent; NaN is 0xFF.
// CHECK-LABEL: func.func @e8m0
// CHECK: math.roundeven
// CHECK: %[[CODE:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[R:.*]] = arith.bitcast %[[CODE]] : i8 to f8E8M0FNU
// CHECK: return %[[R]]
func.func @e8m0(%x: f32) -> f8E8M0FNU {
  %0 = arith.truncf %x : f32 to f8E8M0FNU
  return %0 : f8E8M0FNU
}
