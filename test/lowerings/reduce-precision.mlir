// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// With no mantissa bits a NaN becomes the infinity of its sign.
// CHECK-LABEL: func.func @no_mantissa
// CHECK: %[[R:.*]] = stablehlo.reduce_precision %arg0, format = e5m0 : tensor<3xf64>
// CHECK: %[[BITS:.*]] = stablehlo.bitcast_convert %arg0 : (tensor<3xf64>) -> tensor<3xi64>
// CHECK: %[[SIGNMASK:.*]] = stablehlo.constant dense<-9223372036854775808> : tensor<3xi64>
// CHECK: %[[SIGN:.*]] = stablehlo.and %[[BITS]], %[[SIGNMASK]]
// CHECK: %[[INFBITS:.*]] = stablehlo.constant dense<9218868437227405312> : tensor<3xi64>
// CHECK: %[[OR:.*]] = stablehlo.or %[[SIGN]], %[[INFBITS]]
// CHECK: %[[INF:.*]] = stablehlo.bitcast_convert %[[OR]] : (tensor<3xi64>) -> tensor<3xf64>
// CHECK: %[[NAN:.*]] = stablehlo.compare NE, %arg0, %arg0, FLOAT
// CHECK: %[[S:.*]] = stablehlo.select %[[NAN]], %[[INF]], %[[R]]
// CHECK: return %[[S]]
func.func @no_mantissa(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.reduce_precision %x, format = e5m0 : tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// Formats with mantissa bits keep NaNs: the op is left to upstream.
// CHECK-LABEL: func.func @with_mantissa
// CHECK-NEXT: %[[R:.*]] = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<3xf32>
// CHECK-NEXT: return %[[R]]
func.func @with_mantissa(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.reduce_precision %x, format = e5m10 : tensor<3xf32>
  return %0 : tensor<3xf32>
}
