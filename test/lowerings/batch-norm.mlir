// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// Training: per-feature mean and biased variance by reductions over the other
// dimensions (times 1/4), then (x - mean) / sqrt(var + eps) * scale + offset; bf16 is
// computed in f32 and rounded once.
// CHECK-LABEL: func.func @training
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xbf16>, %[[S:.*]]: tensor<3xbf16>, %[[O:.*]]: tensor<3xbf16>)
// CHECK-NOT: batch_norm
// CHECK: %[[X32:.*]] = stablehlo.convert %[[X]] : (tensor<4x3xbf16>) -> tensor<4x3xf32>
// CHECK: %[[QUARTER:.*]] = stablehlo.constant dense<2.500000e-01> : tensor<3xf32>
// CHECK: %[[SUM:.*]] = stablehlo.reduce(%[[X32]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
// CHECK: %[[MEAN:.*]] = stablehlo.multiply %[[SUM]], %[[QUARTER]] : tensor<3xf32>
// CHECK: %[[C:.*]] = stablehlo.subtract %[[X32]], %{{.*}} : tensor<4x3xf32>
// CHECK: %[[SQ:.*]] = stablehlo.multiply %[[C]], %[[C]]
// CHECK: stablehlo.reduce(%[[SQ]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
// CHECK: %[[VAR:.*]] = stablehlo.multiply %{{.*}}, %[[QUARTER]] : tensor<3xf32>
// CHECK: stablehlo.sqrt
// CHECK: stablehlo.divide
// CHECK: %[[Y:.*]] = stablehlo.add
// CHECK: %[[Y16:.*]] = stablehlo.convert %[[Y]] : (tensor<4x3xf32>) -> tensor<4x3xbf16>
// CHECK: %[[M16:.*]] = stablehlo.convert %[[MEAN]] : (tensor<3xf32>) -> tensor<3xbf16>
// CHECK: %[[V16:.*]] = stablehlo.convert %[[VAR]] : (tensor<3xf32>) -> tensor<3xbf16>
// CHECK: return %[[Y16]], %[[M16]], %[[V16]]
func.func @training(%x: tensor<4x3xbf16>, %s: tensor<3xbf16>, %o: tensor<3xbf16>) -> (tensor<4x3xbf16>, tensor<3xbf16>, tensor<3xbf16>) {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<4x3xbf16>, tensor<3xbf16>, tensor<3xbf16>) -> (tensor<4x3xbf16>, tensor<3xbf16>, tensor<3xbf16>)
  return %0#0, %0#1, %0#2 : tensor<4x3xbf16>, tensor<3xbf16>, tensor<3xbf16>
}

// -----

// Inference: the given statistics, broadcast along the feature dimension (here 0).
// CHECK-LABEL: func.func @inference
// CHECK-SAME: (%[[X:.*]]: tensor<2x5xf32>, %{{.*}}: tensor<2xf32>, %{{.*}}: tensor<2xf32>, %[[M:.*]]: tensor<2xf32>, %[[V:.*]]: tensor<2xf32>)
// CHECK-NOT: stablehlo.reduce
// CHECK: stablehlo.broadcast_in_dim %[[M]], dims = [0] : (tensor<2xf32>) -> tensor<2x5xf32>
// CHECK: stablehlo.broadcast_in_dim %[[V]], dims = [0]
// CHECK: stablehlo.constant dense<9.99999974E-6> : tensor<2x5xf32>
// CHECK: stablehlo.sqrt
func.func @inference(%x: tensor<2x5xf32>, %s: tensor<2xf32>, %o: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<2x5xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {epsilon = 1.0e-5 : f32, feature_index = 0 : i64} : (tensor<2x5xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Grad: three per-feature sums (dy, dy * normalized, dy * centered); N = 2 elements
// per feature.
// CHECK-LABEL: func.func @grad
// CHECK-COUNT-2: stablehlo.reduce
// CHECK: stablehlo.constant dense<2.000000e+00> : tensor<2x3xf32>
// CHECK: stablehlo.reduce
// CHECK-NOT: stablehlo.reduce
// CHECK: return
func.func @grad(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %dy: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %dy) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}
