// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-precise-chlo-math)' | FileCheck %s

// asinh goes through log1p, with log(|x|) + log(2) where |x|^2 would overflow, and
// the sign put back by a select.
// CHECK-LABEL: func.func @asinh
// CHECK-NOT: chlo.asinh
// CHECK: %[[A:.*]] = stablehlo.abs %arg0 : tensor<4xf32>
// CHECK: stablehlo.sqrt
// CHECK: stablehlo.log_plus_one
// CHECK: stablehlo.log %[[A]]
// CHECK: stablehlo.compare LT
// CHECK: stablehlo.negate
// CHECK: %[[R:.*]] = stablehlo.select
// CHECK: return %[[R]]
func.func @asinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = chlo.asinh %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// atanh(x) = (log1p(x) - log1p(-x)) / 2.
// CHECK-LABEL: func.func @atanh
// CHECK: %[[P:.*]] = stablehlo.log_plus_one %arg0 : tensor<3xf64>
// CHECK: %[[N:.*]] = stablehlo.negate %arg0
// CHECK: %[[M:.*]] = stablehlo.log_plus_one %[[N]]
// CHECK: %[[D:.*]] = stablehlo.subtract %[[P]], %[[M]]
// CHECK: stablehlo.multiply %{{.*}}, %[[D]]
func.func @atanh(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = chlo.atanh %x : tensor<3xf64> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// sinh: expm1 near zero, a difference of exponentials elsewhere.
// CHECK-LABEL: func.func @sinh
// CHECK: stablehlo.exponential_minus_one %arg0
// CHECK: stablehlo.exponential
// CHECK: stablehlo.compare LT
// CHECK: stablehlo.select
func.func @sinh(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = chlo.sinh %x : tensor<2x2xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// bf16 and complex keep the upstream expansion (done later by chlo-legalize-to-stablehlo).
// CHECK-LABEL: func.func @untouched
// CHECK: chlo.asinh %arg0 : tensor<4xbf16>
// CHECK: chlo.sinh %arg1 : tensor<2xcomplex<f32>>
func.func @untouched(%x: tensor<4xbf16>, %z: tensor<2xcomplex<f32>>) -> (tensor<4xbf16>, tensor<2xcomplex<f32>>) {
  %0 = chlo.asinh %x : tensor<4xbf16> -> tensor<4xbf16>
  %1 = chlo.sinh %z : tensor<2xcomplex<f32>> -> tensor<2xcomplex<f32>>
  return %0, %1 : tensor<4xbf16>, tensor<2xcomplex<f32>>
}
