// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-reduce-window-scans)' | FileCheck %s

// cumsum along the last dim (JAX's export: a window of the whole row, padded by n - 1
// in front with 0): log2(64) = 6 steps, each adding a copy shifted by 1, 2, ..., 32.
// CHECK-LABEL: func.func @cumsum
// CHECK-NOT: reduce_window
// CHECK: %[[S1:.*]] = stablehlo.slice %arg0 [0:4, 0:63]
// CHECK: %[[P1:.*]] = stablehlo.pad %[[S1]], %{{.*}}, low = [0, 1], high = [0, 0]
// CHECK: %[[X1:.*]] = stablehlo.add %arg0, %[[P1]] : tensor<4x64xf32>
// CHECK: stablehlo.slice %[[X1]] [0:4, 0:62]
// CHECK: stablehlo.pad {{.*}} low = [0, 2]
// CHECK: stablehlo.pad {{.*}} low = [0, 4]
// CHECK: stablehlo.pad {{.*}} low = [0, 8]
// CHECK: stablehlo.pad {{.*}} low = [0, 16]
// CHECK: stablehlo.pad {{.*}} low = [0, 32]
// CHECK: %[[X6:.*]] = stablehlo.add
// CHECK: return %[[X6]]
func.func @cumsum(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<f32>
  %1 = "stablehlo.reduce_window"(%x, %0) <{padding = dense<[[0, 0], [63, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %2 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  return %1 : tensor<4x64xf32>
}

// A reverse cummax along dim 0 (padded after, with -inf): shifted towards lower
// indices, 5 rows in 3 steps.
// CHECK-LABEL: func.func @reverse_cummax
// CHECK-NOT: reduce_window
// CHECK: stablehlo.slice %arg0 [1:5, 0:3]
// CHECK: stablehlo.pad {{.*}} low = [0, 0], high = [1, 0]
// CHECK: stablehlo.maximum
// CHECK: stablehlo.pad {{.*}} high = [2, 0]
// CHECK: stablehlo.maximum
// CHECK: stablehlo.pad {{.*}} high = [4, 0]
// CHECK: stablehlo.maximum
// CHECK-NOT: stablehlo.maximum
// CHECK: return
func.func @reverse_cummax(%x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %1 = "stablehlo.reduce_window"(%x, %c) <{padding = dense<[[0, 4], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 5, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %2 = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<5x3xf32>, tensor<f32>) -> tensor<5x3xf32>
  return %1 : tensor<5x3xf32>
}

// Left alone: a window shorter than the dimension (a moving sum), an init that is
// not the combiner's identity (each output would add it once), and a short float
// cumsum (kept in the interpreter's left-to-right order, to the last ulp).
// CHECK-LABEL: func.func @not_scans
// CHECK-COUNT-3: stablehlo.reduce_window
// CHECK-NOT: stablehlo.pad
func.func @not_scans(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %1 = "stablehlo.reduce_window"(%x, %c) <{padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 4>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %2 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = "stablehlo.reduce_window"(%x, %one) <{padding = dense<[[0, 0], [7, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 8>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %2 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = "stablehlo.reduce_window"(%x, %c) <{padding = dense<[[0, 0], [7, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 8>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %2 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %1, %3, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
