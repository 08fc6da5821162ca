// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-small-top-k)' | FileCheck %s

// chlo.top_k (jit(...).lower().as_text()) with k = 5 of 1000: a custom call, whose
// results give k; no sort.
// CHECK-LABEL: func.func @chlo_form
// CHECK-SAME: (%[[X:.*]]: tensor<256x1000xf32>)
// CHECK-NOT: chlo.top_k
// CHECK: %[[C:.*]]:2 = stablehlo.custom_call @mlxc.top_k(%[[X]]) : (tensor<256x1000xf32>) -> (tensor<256x5xf32>, tensor<256x5xi32>)
// CHECK: return %[[C]]#0, %[[C]]#1
func.func @chlo_form(%x: tensor<256x1000xf32>) -> (tensor<256x5xf32>, tensor<256x5xi32>) {
  %v, %i = chlo.top_k(%x, k = 5) : tensor<256x1000xf32> -> (tensor<256x5xf32>, tensor<256x5xi32>)
  return %v, %i : tensor<256x5xf32>, tensor<256x5xi32>
}

// -----

// The composite of jax.export: the same call; its decomposition is left for symbol-dce.
// CHECK-LABEL: func.func @composite_form
// CHECK-NOT: stablehlo.composite
// CHECK: stablehlo.custom_call @mlxc.top_k(%arg0) : (tensor<2x3x64xbf16>) -> (tensor<2x3x16xbf16>, tensor<2x3x16xi32>)
// CHECK: func.func private @chlo.top_k.impl
func.func @composite_form(%x: tensor<2x3x64xbf16>) -> (tensor<2x3x16xbf16>, tensor<2x3x16xi32>) {
  %0:2 = stablehlo.composite "chlo.top_k" %x {composite_attributes = {k = 16 : i64}, decomposition = @chlo.top_k.impl, version = 1 : i32} : (tensor<2x3x64xbf16>) -> (tensor<2x3x16xbf16>, tensor<2x3x16xi32>)
  return %0#0, %0#1 : tensor<2x3x16xbf16>, tensor<2x3x16xi32>
}
func.func private @chlo.top_k.impl(%x: tensor<2x3x64xbf16>) -> (tensor<2x3x16xbf16>, tensor<2x3x16xi32>) {
  %v, %i = chlo.top_k(%x, k = 16) : tensor<2x3x64xbf16> -> (tensor<2x3x16xbf16>, tensor<2x3x16xi32>)
  return %v, %i : tensor<2x3x16xbf16>, tensor<2x3x16xi32>
}

// -----

// Left to the sort: k > 16, n < 4k, unsigned elements.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: custom_call
// CHECK: chlo.top_k(%arg0, k = 17)
// CHECK: chlo.top_k(%arg1, k = 5)
// CHECK: chlo.top_k(%arg2, k = 2)
func.func @left_alone(%a: tensor<4x1000xf32>, %b: tensor<4x19xf32>, %c: tensor<4x100xui8>)
    -> (tensor<4x17xf32>, tensor<4x5xf32>, tensor<4x2xui8>) {
  %av, %ai = chlo.top_k(%a, k = 17) : tensor<4x1000xf32> -> (tensor<4x17xf32>, tensor<4x17xi32>)
  %bv, %bi = chlo.top_k(%b, k = 5) : tensor<4x19xf32> -> (tensor<4x5xf32>, tensor<4x5xi32>)
  %cv, %ci = chlo.top_k(%c, k = 2) : tensor<4x100xui8> -> (tensor<4x2xui8>, tensor<4x2xi32>)
  return %av, %bv, %cv : tensor<4x17xf32>, tensor<4x5xf32>, tensor<4x2xui8>
}
