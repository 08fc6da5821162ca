// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-outline-layers{min-block=3 min-saved=3})' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-outline-layers)' | FileCheck %s --check-prefix=SMALL

// Three layers tanh(x @ w + b) * m + 1: one function, called three times with each
// layer's weights. The value computed before the layers (%m, further back for each
// layer) is an argument; the constant is cloned in; a layer's value that the return
// also reads (layer 1's product) is a second result of every call.
// CHECK-LABEL: func.func private @main_layer0(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8x8xf32>, %[[B:[^:]*]]: tensor<4x8xf32>, %[[M:[^:]*]]: tensor<4x8xf32>)
// CHECK-SAME: -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {mlxc.layer, no_inline}
// CHECK: %[[P:.*]] = stablehlo.dot_general %[[X]], %[[W]]
// CHECK: %[[S:.*]] = stablehlo.add %[[P]], %[[B]]
// CHECK: %[[T:.*]] = stablehlo.multiply %[[S]], %[[M]]
// CHECK: %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00>
// CHECK: %[[U:.*]] = stablehlo.add %[[T]], %[[ONE]]
// CHECK: %[[V:.*]] = stablehlo.tanh %[[U]]
// CHECK: return %[[T]], %[[V]]
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X0:[^:]*]]: tensor<4x8xf32>, %[[W0:[^:]*]]: tensor<8x8xf32>, %[[B0:[^:]*]]: tensor<4x8xf32>, %[[W1:[^:]*]]: tensor<8x8xf32>, %[[B1:[^:]*]]: tensor<4x8xf32>, %[[W2:[^:]*]]: tensor<8x8xf32>, %[[B2:[^:]*]]: tensor<4x8xf32>)
// CHECK: %[[EXP:.*]] = stablehlo.exponential %[[X0]]
// CHECK-NEXT: %[[L0:.*]]:2 = call @main_layer0(%[[X0]], %[[W0]], %[[B0]], %[[EXP]]) {no_inline}
// CHECK-NEXT: %[[L1:.*]]:2 = call @main_layer0(%[[L0]]#1, %[[W1]], %[[B1]], %[[EXP]]) {no_inline}
// CHECK-NEXT: %[[L2:.*]]:2 = call @main_layer0(%[[L1]]#1, %[[W2]], %[[B2]], %[[EXP]]) {no_inline}
// CHECK-NEXT: return %[[L2]]#1, %[[L1]]#0
// SMALL-LABEL: func.func @main(
// SMALL-NOT: call
func.func @main(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %b0: tensor<4x8xf32>,
                %w1: tensor<8x8xf32>, %b1: tensor<4x8xf32>,
                %w2: tensor<8x8xf32>, %b2: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<4x8xf32>
  %m = stablehlo.exponential %x : tensor<4x8xf32>
  %0 = stablehlo.dot_general %x, %w0, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.add %0, %b0 : tensor<4x8xf32>
  %2 = stablehlo.multiply %1, %m : tensor<4x8xf32>
  %3 = stablehlo.add %2, %one : tensor<4x8xf32>
  %4 = stablehlo.tanh %3 : tensor<4x8xf32>
  %5 = stablehlo.dot_general %4, %w1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %6 = stablehlo.add %5, %b1 : tensor<4x8xf32>
  %7 = stablehlo.multiply %6, %m : tensor<4x8xf32>
  %8 = stablehlo.add %7, %one : tensor<4x8xf32>
  %9 = stablehlo.tanh %8 : tensor<4x8xf32>
  %10 = stablehlo.dot_general %9, %w2, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %11 = stablehlo.add %10, %b2 : tensor<4x8xf32>
  %12 = stablehlo.multiply %11, %m : tensor<4x8xf32>
  %13 = stablehlo.add %12, %one : tensor<4x8xf32>
  %14 = stablehlo.tanh %13 : tensor<4x8xf32>
  return %14, %7 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Repeated elementwise runs (an optimizer's per-parameter update) stay inline: with no
// product in them they compile quickly and fuse with their neighbours.
// CHECK-LABEL: func.func @main(
// CHECK-NOT: call
func.func @main(%p0: tensor<8xf32>, %g0: tensor<8xf32>, %p1: tensor<8xf32>, %g1: tensor<8xf32>,
                %p2: tensor<8xf32>, %g2: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %lr = stablehlo.constant dense<0.1> : tensor<8xf32>
  %0 = stablehlo.multiply %g0, %lr : tensor<8xf32>
  %1 = stablehlo.tanh %0 : tensor<8xf32>
  %2 = stablehlo.subtract %p0, %1 : tensor<8xf32>
  %3 = stablehlo.multiply %g1, %lr : tensor<8xf32>
  %4 = stablehlo.tanh %3 : tensor<8xf32>
  %5 = stablehlo.subtract %p1, %4 : tensor<8xf32>
  %6 = stablehlo.multiply %g2, %lr : tensor<8xf32>
  %7 = stablehlo.tanh %6 : tensor<8xf32>
  %8 = stablehlo.subtract %p2, %7 : tensor<8xf32>
  return %2, %5, %8 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
