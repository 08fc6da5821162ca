// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// gees: the Hessenberg form and its Q by the gehrd and orgqr rules (their loops), then
// one scf.for step per batch member around an scf.while that runs until every
// eigenvalue has split off (or 30 max(10, n) sweeps). A step picks, by selects, between
// splitting off a 1x1 block, a 2x2 block, and a Francis double-shift sweep whose bulge
// loop (empty unless it is the case) updates three rows and three columns of the matrix
// padded to 5x5. No scf.if: the deallocation passes could not track its buffers.
// CHECK-LABEL: func.func @gees
// CHECK-NOT: custom_call
// CHECK: scf.for {{.*}} -> (tensor<2x4x4xf32>, tensor<2x3xf32>)
// CHECK: scf.for {{.*}} -> (tensor<2x3x3xf32>)
// CHECK: %[[B:.*]]:6 = scf.for {{.*}} -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<2xi32>)
// CHECK: stablehlo.pad {{.*}} -> tensor<5x5xf32>
// CHECK: scf.while {{.*}} : (tensor<5x5xf32>, tensor<4x5xf32>, tensor<i64>, tensor<i64>, tensor<i64>)
// CHECK: scf.condition
// CHECK: } do {
// CHECK: stablehlo.reduce{{.*}}applies stablehlo.maximum
// CHECK: scf.for {{.*}} -> (tensor<5x5xf32>, tensor<4x5xf32>)
// CHECK: stablehlo.dynamic_slice {{.*}} sizes = [3, 5]
// CHECK: stablehlo.dynamic_slice {{.*}} sizes = [5, 3]
// CHECK: stablehlo.dynamic_slice {{.*}} sizes = [4, 3]
// CHECK: scf.yield
// CHECK-NOT: scf.if
// CHECK: scf.yield {{.*}} : tensor<5x5xf32>, tensor<4x5xf32>, tensor<i64>, tensor<i64>, tensor<i64>
// CHECK: return %{{.*}} : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<2xi32>
func.func @gees(%a: tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<2xi32>) {
  %0:6 = stablehlo.custom_call @lapack_sgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<2xi32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4, %0#5 : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<2xi32>
}

// -----

// geev (complex): after the Schur form, the eigenvectors of T row by row from the
// bottom (a loop counting down), then V = Z X, normalised per column.
// CHECK-LABEL: func.func @geev
// CHECK-NOT: custom_call
// CHECK: scf.while
// CHECK: scf.for %[[I:[a-z0-9_]+]] = {{.*}} -> (tensor<3x3xcomplex<f64>>)
// CHECK-NEXT: arith.subi %{{.*}}, %[[I]] : index
// CHECK: scf.yield
// CHECK: stablehlo.dot_general {{.*}} contracting_dims = [1] x [0] : (tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>)
// CHECK: stablehlo.sqrt
// CHECK: return %{{.*}} : tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<i32>
func.func @geev(%a: tensor<3x3xcomplex<f64>>) -> (tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<i32>) {
  %0:4 = stablehlo.custom_call @lapack_zgeev_ffi(%a) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}} : (tensor<3x3xcomplex<f64>>) -> (tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<i32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<i32>
}

// -----

// geev (real) without vectors: wr and wi from T's diagonal and 2x2 blocks, no
// eigenvector loop; vl and vr zeros.
// CHECK-LABEL: func.func @geev_values
// CHECK: scf.while
// CHECK-NOT: stablehlo.dot_general
// CHECK: return
func.func @geev_values(%a: tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 78 : ui8}} : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<3xf32>, tensor<3xf32>, tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>
}

// -----

// Left and right eigenvectors: two substitution loops and two products with Z.
// CHECK-LABEL: func.func @geev_left
// CHECK: stablehlo.dot_general
// CHECK: stablehlo.dot_general
// CHECK: return
func.func @geev_left(%a: tensor<3x3xf64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_dgeev_ffi(%a) {mhlo.backend_config = {compute_left = 86 : ui8, compute_right = 86 : ui8}} : (tensor<3x3xf64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<i32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<3xf64>, tensor<3xf64>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<i32>
}
