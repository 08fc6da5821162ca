// RUN: mlxc-opt %s --split-input-file --mlxc-pipeline=cpu --mlxc-start-after=simplify --mlxc-stop-after=linalg | FileCheck %s

// StableHLO becomes linalg on tensors; unsigned integers become signless.
// CHECK: mlxc.stage = "linalg"
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> tensor<4xi8>
// CHECK-NOT: stablehlo.
// CHECK-NOT: unrealized_conversion_cast
// CHECK: linalg.generic
// CHECK: arith.maxui
module attributes {mlxc.entry = "main"} {
  func.func public @main(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
    %0 = stablehlo.maximum %a, %b : tensor<4xui8>
    return %0 : tensor<4xui8>
  }
}

// -----

// bf16 matmuls accumulate in f32 (inputs extended, one truncation at the end).
// CHECK-LABEL: func.func public @main
// CHECK: linalg.matmul ins({{.*}} : tensor<4x8xf32>, tensor<8x2xf32>) outs({{.*}} : tensor<4x2xf32>)
// CHECK: arith.truncf {{.*}} : f32 to bf16
module attributes {mlxc.entry = "main"} {
  func.func public @main(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
    return %0 : tensor<4x2xbf16>
  }
}
