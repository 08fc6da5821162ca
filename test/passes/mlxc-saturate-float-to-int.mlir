// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-saturate-float-to-int)' | FileCheck %s

// f32 -> i8: values at or past 2^7 become 127, below -2^7 become -128, NaN becomes 0.
// CHECK-LABEL: func.func @to_i8
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[C:.*]] = stablehlo.convert %[[X]] : (tensor<4xf32>) -> tensor<4xi8>
// CHECK-DAG: %[[HI:.*]] = stablehlo.constant dense<1.280000e+02> : tensor<4xf32>
// CHECK-DAG: %[[LO:.*]] = stablehlo.constant dense<-1.280000e+02> : tensor<4xf32>
// CHECK-DAG: %[[BIG:.*]] = stablehlo.compare GE, %[[X]], %[[HI]], FLOAT
// CHECK-DAG: %[[SMALL:.*]] = stablehlo.compare LT, %[[X]], %[[LO]], FLOAT
// CHECK-DAG: %[[NAN:.*]] = stablehlo.compare NE, %[[X]], %[[X]], FLOAT
// CHECK-DAG: %[[MAX:.*]] = stablehlo.constant dense<127> : tensor<4xi8>
// CHECK: %[[S1:.*]] = stablehlo.select %[[BIG]], %[[MAX]], %[[C]]
// CHECK: %[[MIN:.*]] = stablehlo.constant dense<-128> : tensor<4xi8>
// CHECK: %[[S2:.*]] = stablehlo.select %[[SMALL]], %[[MIN]], %[[S1]]
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<4xi8>
// CHECK: %[[S3:.*]] = stablehlo.select %[[NAN]], %[[ZERO]], %[[S2]]
// CHECK: return %[[S3]]
func.func @to_i8(%x: tensor<4xf32>) -> tensor<4xi8> {
  %0 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// Unsigned targets clamp at 0 and 2^N - 1; a bound past the float type's range
// (2^32 in f16) becomes an infinity.
// CHECK-LABEL: func.func @f16_to_ui32
// CHECK-DAG: stablehlo.constant dense<0x7C00> : tensor<2xf16>
// CHECK-DAG: stablehlo.constant dense<0.000000e+00> : tensor<2xf16>
// CHECK-DAG: stablehlo.constant dense<4294967295> : tensor<2xui32>
func.func @f16_to_ui32(%x: tensor<2xf16>) -> tensor<2xui32> {
  %0 = stablehlo.convert %x : (tensor<2xf16>) -> tensor<2xui32>
  return %0 : tensor<2xui32>
}

// -----

// Integer and boolean conversions are untouched.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: stablehlo.select
func.func @untouched(%a: tensor<3xi32>, %x: tensor<3xf32>) -> (tensor<3xi8>, tensor<3xi1>, tensor<3xf32>) {
  %0 = stablehlo.convert %a : (tensor<3xi32>) -> tensor<3xi8>
  %1 = stablehlo.convert %x : (tensor<3xf32>) -> tensor<3xi1>
  %2 = stablehlo.convert %a : (tensor<3xi32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xi8>, tensor<3xi1>, tensor<3xf32>
}

// -----

// fp8 converts saturate too (fuzz case lowp/16804). f8E4M3FN reaches neither bound of
// i32 (its largest value is 448) and has no infinities: only NaN is mapped. To ui8 its
// negative values clamp at 0 and 256 is a bound it can hold.
// CHECK-LABEL: func.func @f8_to_i32
// CHECK-NOT: compare GE
// CHECK-NOT: compare LT
// CHECK: stablehlo.compare NE
// CHECK-LABEL: func.func @f8_to_ui8
// CHECK-DAG: stablehlo.constant dense<2.560000e+02> : tensor<3xf8E4M3FN>
// CHECK-DAG: stablehlo.compare GE
// CHECK-DAG: stablehlo.compare LT
// CHECK-DAG: stablehlo.compare NE
func.func @f8_to_i32(%x: tensor<3xf8E4M3FN>) -> tensor<3xi32> {
  %0 = stablehlo.convert %x : (tensor<3xf8E4M3FN>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
func.func @f8_to_ui8(%x: tensor<3xf8E4M3FN>) -> tensor<3xui8> {
  %0 = stablehlo.convert %x : (tensor<3xf8E4M3FN>) -> tensor<3xui8>
  return %0 : tensor<3xui8>
}
