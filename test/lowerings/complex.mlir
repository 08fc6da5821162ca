// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// bitcast_convert from complex goes through the (real, imaginary) float view.
// CHECK-LABEL: func.func @c128_to_c64
// CHECK-DAG: %[[RE:.*]] = stablehlo.real %arg0 : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
// CHECK-DAG: %[[IM:.*]] = stablehlo.imag %arg0 : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
// CHECK: %[[PAIRS:.*]] = stablehlo.concatenate {{.*}}, dim = 1 : (tensor<3x1xf64>, tensor<3x1xf64>) -> tensor<3x2xf64>
// CHECK: %[[BITS:.*]] = stablehlo.bitcast_convert %[[PAIRS]] : (tensor<3x2xf64>) -> tensor<3x2x2xf32>
// CHECK: stablehlo.slice %[[BITS]] [0:3, 0:2, 0:1]
// CHECK: stablehlo.slice %[[BITS]] [0:3, 0:2, 1:2]
// CHECK: %[[C:.*]] = stablehlo.complex {{.*}} : tensor<3x2xcomplex<f32>>
// CHECK: return %[[C]]
func.func @c128_to_c64(%x: tensor<3xcomplex<f64>>) -> tensor<3x2xcomplex<f32>> {
  %0 = stablehlo.bitcast_convert %x : (tensor<3xcomplex<f64>>) -> tensor<3x2xcomplex<f32>>
  return %0 : tensor<3x2xcomplex<f32>>
}

// -----

// A bitcast to the same complex type is the identity; real bitcasts stay.
// CHECK-LABEL: func.func @same
// CHECK-NOT: bitcast_convert {{.*}}complex
// CHECK: %[[I:.*]] = stablehlo.bitcast_convert %arg1 : (tensor<2xf32>) -> tensor<2xi32>
// CHECK: return %arg0, %[[I]]
func.func @same(%x: tensor<2xcomplex<f32>>, %y: tensor<2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2xi32>) {
  %0 = stablehlo.bitcast_convert %x : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %1 = stablehlo.bitcast_convert %y : (tensor<2xf32>) -> tensor<2xi32>
  return %0, %1 : tensor<2xcomplex<f32>>, tensor<2xi32>
}

// -----

// Complex maximum orders by (real, imaginary); real maximum stays.
// CHECK-LABEL: func.func @maximum
// CHECK-DAG: %[[RA:.*]] = stablehlo.real %arg0
// CHECK-DAG: %[[RB:.*]] = stablehlo.real %arg1
// CHECK-DAG: %[[IA:.*]] = stablehlo.imag %arg0
// CHECK-DAG: %[[IB:.*]] = stablehlo.imag %arg1
// CHECK-DAG: %[[GT:.*]] = stablehlo.compare GT, %[[RA]], %[[RB]], FLOAT
// CHECK-DAG: %[[EQ:.*]] = stablehlo.compare EQ, %[[RA]], %[[RB]], FLOAT
// CHECK-DAG: %[[IGT:.*]] = stablehlo.compare GT, %[[IA]], %[[IB]], FLOAT
// CHECK: %[[TIE:.*]] = stablehlo.and %[[EQ]], %[[IGT]]
// CHECK: %[[WIN:.*]] = stablehlo.or %[[GT]], %[[TIE]]
// CHECK: %[[R:.*]] = stablehlo.select %[[WIN]], %arg0, %arg1
// CHECK: stablehlo.maximum %arg2, %arg2 : tensor<4xf32>
func.func @maximum(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>, %c: tensor<4xf32>) -> (tensor<4xcomplex<f32>>, tensor<4xf32>) {
  %0 = stablehlo.maximum %a, %b : tensor<4xcomplex<f32>>
  %1 = stablehlo.maximum %c, %c : tensor<4xf32>
  return %0, %1 : tensor<4xcomplex<f32>>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @minimum
// CHECK: stablehlo.compare LT
// CHECK: stablehlo.select
func.func @minimum(%a: tensor<4xcomplex<f64>>, %b: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
  %0 = stablehlo.minimum %a, %b : tensor<4xcomplex<f64>>
  return %0 : tensor<4xcomplex<f64>>
}

// -----

// Complex cbrt: the principal root, cbrt(|z|) at a third of the angle.
// CHECK-LABEL: func.func @cbrt
// CHECK: %[[ABS:.*]] = stablehlo.abs %arg0 : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
// CHECK: %[[MOD:.*]] = stablehlo.cbrt %[[ABS]] : tensor<2xf64>
// CHECK: %[[ANG:.*]] = stablehlo.atan2
// CHECK: stablehlo.divide %[[ANG]]
// CHECK: stablehlo.complex
// CHECK: stablehlo.cbrt %arg1 : tensor<2xf32>
func.func @cbrt(%z: tensor<2xcomplex<f64>>, %x: tensor<2xf32>) -> (tensor<2xcomplex<f64>>, tensor<2xf32>) {
  %0 = stablehlo.cbrt %z : tensor<2xcomplex<f64>>
  %1 = stablehlo.cbrt %x : tensor<2xf32>
  return %0, %1 : tensor<2xcomplex<f64>>, tensor<2xf32>
}

// -----

// Complex tanh: (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y), with sinh and
// cosh from expm1; past |x| = 40, sign(x) + 4i sin y cos y exp(-2|x|).
// CHECK-LABEL: func.func @tanh
// CHECK: stablehlo.exponential_minus_one
// CHECK: %[[NEAR:.*]] = stablehlo.complex
// CHECK: %[[FAR:.*]] = stablehlo.complex
// CHECK: %[[IS_FAR:.*]] = stablehlo.compare GT
// CHECK: stablehlo.select %[[IS_FAR]], %[[FAR]], %[[NEAR]]
// CHECK-NOT: stablehlo.tanh {{.*}}complex
// CHECK: stablehlo.tanh %arg1 : tensor<2xf32>
func.func @tanh(%z: tensor<2xcomplex<f32>>, %x: tensor<2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2xf32>) {
  %0 = stablehlo.tanh %z : tensor<2xcomplex<f32>>
  %1 = stablehlo.tanh %x : tensor<2xf32>
  return %0, %1 : tensor<2xcomplex<f32>>, tensor<2xf32>
}

// -----

// Complex log1p: (1/2) log1p(x (x + 2) + y^2) + i atan2(y, x + 1); log|1 + z| for huge z.
// CHECK-LABEL: func.func @log_plus_one
// CHECK: %[[L:.*]] = stablehlo.log_plus_one %{{.*}} : tensor<2xf32>
// CHECK: %[[SMALL:.*]] = stablehlo.multiply %{{.*}}, %[[L]]
// CHECK: %[[LARGE:.*]] = stablehlo.log
// CHECK: %[[IS_LARGE:.*]] = stablehlo.compare GT
// CHECK: %[[RE:.*]] = stablehlo.select %[[IS_LARGE]], %[[LARGE]], %[[SMALL]]
// CHECK: %[[IM:.*]] = stablehlo.atan2
// CHECK: stablehlo.complex %[[RE]], %[[IM]]
// CHECK: stablehlo.log_plus_one %arg1 : tensor<2xf32>
func.func @log_plus_one(%z: tensor<2xcomplex<f32>>, %x: tensor<2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2xf32>) {
  %0 = stablehlo.log_plus_one %z : tensor<2xcomplex<f32>>
  %1 = stablehlo.log_plus_one %x : tensor<2xf32>
  return %0, %1 : tensor<2xcomplex<f32>>, tensor<2xf32>
}

// -----

// Complex expm1 (XLA's formula): re = fma(expm1(x), cosm1(y) + 1, cosm1(y)), cosm1 a
// series below y^2 = 0.61685 and cos(y) - 1 above; im = exp(x) sin y, +0 where y == 0.
// For f32 parts, each multiply-add is done in f64 (the product is exact there).
// CHECK-LABEL: func.func @expm1_c64
// CHECK: %[[X:.*]] = stablehlo.real %arg0
// CHECK: %[[Y:.*]] = stablehlo.imag %arg0
// CHECK: %[[E:.*]] = stablehlo.exponential_minus_one %[[X]] : tensor<2xf32>
// CHECK: stablehlo.multiply {{.*}} : tensor<2xf64>
// CHECK: %[[C:.*]] = stablehlo.cosine %[[Y]]
// CHECK: %[[SERIES:.*]] = stablehlo.compare GE
// CHECK: %[[CM1:.*]] = stablehlo.select %[[SERIES]]
// CHECK: %[[RE:.*]] = stablehlo.convert %{{.*}} : (tensor<2xf64>) -> tensor<2xf32>
// CHECK: %[[S:.*]] = stablehlo.sine %[[Y]]
// CHECK: %[[IM0:.*]] = stablehlo.multiply %{{.*}}, %[[S]]
// CHECK: %[[Z:.*]] = stablehlo.compare EQ, %[[Y]]
// CHECK: %[[IM:.*]] = stablehlo.select %[[Z]], %{{.*}}, %[[IM0]]
// CHECK: stablehlo.complex %[[RE]], %[[IM]]
// CHECK: stablehlo.exponential_minus_one %arg1 : tensor<2xf32>
func.func @expm1_c64(%z: tensor<2xcomplex<f32>>, %x: tensor<2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2xf32>) {
  %0 = stablehlo.exponential_minus_one %z : tensor<2xcomplex<f32>>
  %1 = stablehlo.exponential_minus_one %x : tensor<2xf32>
  return %0, %1 : tensor<2xcomplex<f32>>, tensor<2xf32>
}

// -----

// f64 parts: a * b = p + e exactly (Veltkamp's split by 2^27 + 1), then (p + c) + e,
// the plain p + c where the split overflows.
// CHECK-LABEL: func.func @expm1_c128
// CHECK: stablehlo.constant dense<0x41A0000002000000> : tensor<2xf64>
// CHECK: stablehlo.is_finite
// CHECK-NOT: tensor<2xf32>
// CHECK: stablehlo.complex
func.func @expm1_c128(%z: tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>> {
  %0 = stablehlo.exponential_minus_one %z : tensor<2xcomplex<f64>>
  return %0 : tensor<2xcomplex<f64>>
}
