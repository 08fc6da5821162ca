// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-select-entry,mlxc-quantized-entry,mlxc-signed-quantized-storage)' | FileCheck %s

// u8 with zero point z and range [lo, hi] becomes i8 with z - 128 and [lo - 128,
// hi - 128]; raw storage bits crossing in or out (the entry's arguments and results,
// bitcast_convert to and from integers) get their top bit flipped. The signature keeps
// the unsigned types.
// CHECK: mlxc.quantized_entry = (tensor<4x!quant.uniform<u8:f32, 5.000000e-01:10>>, tensor<4xui8>, tensor<4xf32>) -> (tensor<4x!quant.uniform<u8:f32, 5.000000e-01:10>>, tensor<4xui8>)
// CHECK: func.func @main(%[[A:arg.]]: tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-118>>, %[[B:arg.]]: tensor<4xui8>, %[[X:arg.]]: tensor<4xf32>)
// CHECK-SAME: -> (tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-118>>, tensor<4xui8>)
// CHECK: %[[RAW_A:.*]] = stablehlo.bitcast_convert %[[A]] : {{.*}} -> tensor<4xi8>
// CHECK: %[[M1:.*]] = stablehlo.constant dense<-128> : tensor<4xi8>
// CHECK: %[[FA:.*]] = stablehlo.xor %[[RAW_A]], %[[M1]]
// CHECK: %[[QA:.*]] = stablehlo.bitcast_convert %[[FA]] : (tensor<4xi8>) -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-118>>
// CHECK: %[[M2:.*]] = stablehlo.constant dense<128> : tensor<4xui8>
// CHECK: %[[FB:.*]] = stablehlo.xor %[[B]], %[[M2]] : tensor<4xui8>
// CHECK: %[[QB:.*]] = stablehlo.bitcast_convert %[[FB]] : (tensor<4xui8>) -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-118>>
// CHECK: %[[S:.*]] = stablehlo.add %[[QA]], %[[QB]]
// CHECK: %[[Q:.*]] = stablehlo.uniform_quantize %[[X]] : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8<-127:126>:f32, 1.000000e-01:72>>
// CHECK: %[[RAW_Q:.*]] = stablehlo.bitcast_convert %[[Q]] {{.*}} -> tensor<4xui8>
// CHECK: %[[FQ:.*]] = stablehlo.xor %[[RAW_Q]], %{{.*}} : tensor<4xui8>
// CHECK: %[[RAW_S:.*]] = stablehlo.bitcast_convert %[[S]] {{.*}} -> tensor<4xi8>
// CHECK: %[[FS:.*]] = stablehlo.xor %[[RAW_S]], %{{.*}} : tensor<4xi8>
// CHECK: %[[OUT:.*]] = stablehlo.bitcast_convert %[[FS]] {{.*}} -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-118>>
// CHECK: return %[[OUT]], %[[FQ]]
func.func @main(%a: tensor<4x!quant.uniform<u8:f32, 0.5:10>>, %b: tensor<4xui8>, %x: tensor<4xf32>) -> (tensor<4x!quant.uniform<u8:f32, 0.5:10>>, tensor<4xui8>) {
  %qb = stablehlo.bitcast_convert %b : (tensor<4xui8>) -> tensor<4x!quant.uniform<u8:f32, 0.5:10>>
  %s = stablehlo.add %a, %qb : tensor<4x!quant.uniform<u8:f32, 0.5:10>>
  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x!quant.uniform<u8<1:254>:f32, 0.1:200>>
  %r = stablehlo.bitcast_convert %q : (tensor<4x!quant.uniform<u8<1:254>:f32, 0.1:200>>) -> tensor<4xui8>
  return %s, %r : tensor<4x!quant.uniform<u8:f32, 0.5:10>>, tensor<4xui8>
}

// -----

// Signed storage only: unchanged.
// CHECK-LABEL: module attributes {mlxc.entry = "main"} {
// CHECK-NEXT: func.func @main
// CHECK-NEXT: stablehlo.uniform_quantize %arg0 : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>
// CHECK-NEXT: stablehlo.uniform_dequantize
// CHECK-NEXT: return
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.5:-3>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<4x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
