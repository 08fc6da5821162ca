// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-dot-general-layout{kernel-products=1})' | FileCheck %s

// With kernel-products=1 (the CPU pipeline when products call the runtime's kernel), a
// product the kernel takes reads its operands in place: attention's q.k^T keeps k as it
// is (the kernel reads a transposed right-hand side).
// CHECK-LABEL: func.func @attention_scores
// CHECK-NOT: stablehlo.transpose
// CHECK: stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [2]
func.func @attention_scores(%q: tensor<4x128x64xf32>, %k: tensor<4x128x64xf32>) -> tensor<4x128x128xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<4x128x64xf32>, tensor<4x128x64xf32>) -> tensor<4x128x128xf32>
  return %0 : tensor<4x128x128xf32>
}

// -----

// An operand that an elementwise op computes for this product alone is put in place:
// the transpose becomes that op's output map, free. A product the kernel does not take
// (f16 here) gets the copy its generated code needs.
// CHECK-LABEL: func.func @fusable_operand
// CHECK: %[[KT:.*]] = stablehlo.transpose %{{.*}}, dims = [0, 2, 1]
// CHECK: stablehlo.dot_general %arg0, %[[KT]]
// CHECK-LABEL: func.func @half
// CHECK: stablehlo.transpose %arg1, dims = [0, 2, 1]
func.func @fusable_operand(%q: tensor<4x128x64xf32>, %k: tensor<4x128x64xf32>) -> tensor<4x128x128xf32> {
  %s = stablehlo.multiply %k, %k : tensor<4x128x64xf32>
  %0 = stablehlo.dot_general %q, %s, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<4x128x64xf32>, tensor<4x128x64xf32>) -> tensor<4x128x128xf32>
  return %0 : tensor<4x128x128xf32>
}
func.func @half(%q: tensor<4x128x64xf16>, %k: tensor<4x128x64xf16>) -> tensor<4x128x128xf16> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<4x128x64xf16>, tensor<4x128x64xf16>) -> tensor<4x128x128xf16>
  return %0 : tensor<4x128x128xf16>
}
