// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-approximate-math)' | FileCheck %s

// exp: clamp, n = floor(x log2e + 1/2) clamped to [-127, 127], a = x - n ln2 in two
// steps, the polynomial, then 2^n from its exponent bits; on n-D vectors as they are.
// Each multiply-add is a mulf/addf pair marked `contract`, which LLVM fuses into an
// FMA where the CPU has one.
// CHECK-LABEL: func.func @exp_vector
// CHECK-NOT: math.exp
// CHECK: arith.cmpf olt, %arg0, %{{.*}} : vector<1x8xf32>
// CHECK: arith.cmpf ogt, %{{.*}} : vector<1x8xf32>
// CHECK: %[[X:.*]] = arith.select %{{.*}} : vector<1x8xi1>, vector<1x8xf32>
// CHECK: %[[M:.*]] = arith.mulf %[[X]], %{{.*}} fastmath<contract> : vector<1x8xf32>
// CHECK: %[[T:.*]] = arith.addf %[[M]], %{{.*}} fastmath<contract> : vector<1x8xf32>
// CHECK: %[[F:.*]] = math.floor %[[T]] : vector<1x8xf32>
// CHECK: arith.cmpf ogt, %[[F]]
// CHECK: arith.cmpf olt
// CHECK: %[[N:.*]] = arith.select {{.*}} : vector<1x8xi1>, vector<1x8xf32>
// CHECK: arith.mulf %[[N]], %{{.*}} fastmath<contract>
// CHECK: %[[A1:.*]] = arith.addf %{{.*}}, %[[X]] fastmath<contract> : vector<1x8xf32>
// CHECK: arith.mulf %[[N]], %{{.*}} fastmath<contract>
// CHECK: %[[A:.*]] = arith.addf %{{.*}}, %[[A1]] fastmath<contract> : vector<1x8xf32>
// CHECK-COUNT-5: arith.mulf %{{.*}}, %[[A]] fastmath<contract> : vector<1x8xf32>
// CHECK: %[[Z:.*]] = arith.addf {{%[a-z0-9_]+}}, {{%[a-z0-9_]+}} : vector<1x8xf32>
// CHECK: %[[NI:.*]] = arith.fptosi %[[N]] : vector<1x8xf32> to vector<1x8xi32>
// CHECK: %[[B:.*]] = arith.addi %[[NI]]
// CHECK: %[[S:.*]] = arith.shli %[[B]]
// CHECK: %[[P:.*]] = arith.bitcast %[[S]] : vector<1x8xi32> to vector<1x8xf32>
// CHECK: %[[R:.*]] = arith.mulf %[[Z]], %[[P]] : vector<1x8xf32>
// CHECK: return %[[R]]
func.func @exp_vector(%x: vector<1x8xf32>) -> vector<1x8xf32> {
  %0 = math.exp %x : vector<1x8xf32>
  return %0 : vector<1x8xf32>
}

// -----

// tanh: a rational function of x clamped to +-7.9988 (exactly +-1 there), capped to
// [-1, 1], and x itself below 0.0004 in magnitude, so tanh(-0) = -0.
// CHECK-LABEL: func.func @tanh_scalar
// CHECK-NOT: math.tanh
// CHECK-DAG: %[[LO:.*]] = arith.constant -7.99881172 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 7.99881172 : f32
// CHECK: arith.cmpf olt, %arg0, %[[LO]] : f32
// CHECK: arith.cmpf ogt, %{{.*}}, %[[HI]] : f32
// CHECK: %[[Q:.*]] = arith.divf
// CHECK: arith.cmpf olt, %[[Q]]
// CHECK: arith.cmpf ogt
// CHECK: %[[C:.*]] = arith.select
// CHECK: %[[ABS:.*]] = math.absf %arg0 : f32
// CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[ABS]], %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.select %[[TINY]], %arg0, %[[C]] : f32
// CHECK: return %[[R]]
func.func @tanh_scalar(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// -----

// log: exponent and mantissa from the bits (subnormals scaled by 2^23 first), the
// polynomial, then log(0) = -inf, log(inf) = inf, and NaN for x < 0 or NaN (ult).
// CHECK-LABEL: func.func @log_vector
// CHECK-NOT: math.log
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shrsi
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: arith.sitofp
// CHECK-COUNT-8: arith.mulf {{.*}} fastmath<contract> : vector<16xf32>
// CHECK: arith.cmpf oeq, %arg0
// CHECK: arith.cmpf oeq, %arg0
// CHECK: %[[NEG:.*]] = arith.cmpf ult, %arg0
// CHECK: %[[R:.*]] = arith.select %[[NEG]], %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: return %[[R]]
func.func @log_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.log %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// erf: an odd rational function, +-1 from |x| >= 3.8325.
// CHECK-LABEL: func.func @erf_vector
// CHECK-NOT: math.erf
// CHECK: %[[BIG:.*]] = arith.cmpf oge
// CHECK: %[[ONE:.*]] = math.copysign %{{.*}}, %arg0 : vector<8xf32>
// CHECK: %[[Q:.*]] = arith.divf
// CHECK: arith.select %[[BIG]], %[[ONE]], %[[Q]] : vector<8xi1>, vector<8xf32>
func.func @erf_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.erf %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// f64 exp: XLA's f64 algorithm. Inputs beyond [-708.396, 709.783] give 0 or inf,
// n = floor(x log2e + 1/2) clamped to [-1022, 1024], g = x - n ln2 in two steps, the
// rational function 1 + 2 P(g) / (Q(g^2) - P(g)), then 2^n as two exponent-bit
// factors so each is a normal number.
// CHECK-LABEL: func.func @exp_f64
// CHECK-NOT: math.exp
// CHECK: %[[BELOW:.*]] = arith.cmpf olt, %arg0, %{{.*}} : vector<4xf64>
// CHECK: %[[ABOVE:.*]] = arith.cmpf ogt, %arg0, %{{.*}} : vector<4xf64>
// CHECK: math.floor
// CHECK: arith.addf %{{.*}} fastmath<contract> : vector<4xf64>
// CHECK: %[[Q:.*]] = arith.subf
// CHECK: arith.divf %{{.*}}, %[[Q]] : vector<4xf64>
// CHECK: %[[N:.*]] = arith.fptosi %{{.*}} : vector<4xf64> to vector<4xi64>
// CHECK: %[[H:.*]] = arith.shrsi %[[N]], %{{.*}} : vector<4xi64>
// CHECK: arith.shli %{{.*}} : vector<4xi64>
// CHECK: arith.bitcast %{{.*}} : vector<4xi64> to vector<4xf64>
// CHECK: arith.subi %[[N]], %[[H]] : vector<4xi64>
// CHECK: %[[R:.*]] = arith.mulf
// CHECK: %[[R0:.*]] = arith.select %[[BELOW]], %{{.*}}, %[[R]] : vector<4xi1>, vector<4xf64>
// CHECK: %[[R1:.*]] = arith.select %[[ABOVE]], %{{.*}}, %[[R0]] : vector<4xi1>, vector<4xf64>
// CHECK: return %[[R1]]
func.func @exp_f64(%x: vector<4xf64>) -> vector<4xf64> {
  %0 = math.exp %x : vector<4xf64>
  return %0 : vector<4xf64>
}

// -----

// f64 tanh keeps libm's (under 1 ulp): XLA's rational function is up to 6 ulp off.
// CHECK-LABEL: func.func @tanh_f64
// CHECK: %[[T:.*]] = math.tanh %arg0 : f64
// CHECK-NEXT: return %[[T]]
func.func @tanh_f64(%x: f64) -> f64 {
  %0 = math.tanh %x : f64
  return %0 : f64
}

// -----

// Other functions and element types keep the libm path.
// CHECK-LABEL: func.func @other_types
// CHECK: math.log %arg0 : vector<4xf64>
// CHECK: math.erf %arg1 : f64
// CHECK: math.log %arg2 : f16
// CHECK-NOT: fastmath
func.func @other_types(%a: vector<4xf64>, %b: f64, %c: f16) -> (vector<4xf64>, f64, f16) {
  %0 = math.log %a : vector<4xf64>
  %1 = math.erf %b : f64
  %2 = math.log %c : f16
  return %0, %1, %2 : vector<4xf64>, f64, f16
}
