// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-inits-as-inputs)' | FileCheck %s
// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-inits-as-inputs,func.func(linalg-fuse-elementwise-ops))' | FileCheck %s --check-prefix=FUSED

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#a = affine_map<(d0, d1, d2) -> (d2, d0)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// An outer product accumulating onto its zero fill: the fill becomes an input read at
// the element written, and the op writes a fresh tensor.
// CHECK-LABEL: func.func @outer_then_product
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[ID:.*]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%arg0, %arg1, %[[FILL]] : tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>) outs(%[[EMPTY]] : tensor<4x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[ACC:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]

// Fused into the product, the fill is its scalar: no output of the outer product is
// kept, so nothing adds up across the product's reduction loop.
// FUSED-LABEL: func.func @outer_then_product
// FUSED: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// FUSED-SAME: outs(%{{.*}} : tensor<4x4xf32>)
// FUSED-NOT: linalg.generic
// FUSED: return %[[R]]
func.func @outer_then_product(%x: tensor<4xf32>, %y: tensor<4xf32>, %l: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %outer = linalg.generic {indexing_maps = [#row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%fill : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %b0: f32, %o: f32):
    %p = arith.mulf %a0, %b0 : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %fill2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %prod = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%outer, %l : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %b0: f32, %o: f32):
    %p = arith.mulf %a0, %b0 : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %prod : tensor<4x4xf32>
}

// Ops with a reduction loop, and elementwise ops that do not read their destination,
// are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x4xf32>) outs(%arg1 : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x4xf32>) outs(%arg0 : tensor<4x4xf32>)
func.func @untouched(%x: tensor<4x4xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x4xf32>) {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %s = arith.addf %o, %a0 : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %s = arith.negf %a0 : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r, %n : tensor<4xf32>, tensor<4x4xf32>
}
