// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// The JAX CPU form: column-major layouts (ignored: they describe XLA's storage, the
// logical shapes carry the meaning) and a Shardy sharding rule, blanked out when the
// text is read. potrf is stablehlo.cholesky, lowered in place, with A's entries kept
// above the diagonal and `info` the first column whose diagonal entry is not positive.
// CHECK-LABEL: func.func @potrf
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x3xf32>)
// CHECK-NOT: custom_call
// CHECK-NOT: sdy
// CHECK: scf.for
// CHECK: stablehlo.sqrt
// CHECK: %[[L:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[A]] : tensor<2x3x3xi1>, tensor<2x3x3xf32>
// CHECK: stablehlo.compare GT
// CHECK: %[[FIRST:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.minimum across dimensions = [1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
// CHECK: %[[INFO:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[FIRST]] : tensor<2xi1>, tensor<2xi32>
// CHECK: return %[[L]], %[[INFO]]
func.func @potrf(%a: tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>) {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([b, i, j])->([b, k, l], [b]) {b=2, i=3, j=3, k=3, l=3}, custom>} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<2x3x3xf32>, tensor<2xi32>
}

// -----

// trsm with side = 'R', uplo = 'U', trans_x = 'T', diag = 'U' is the triangular_solve
// of the same options (lowered at once: X B = A^T... by an inverse of the triangle).
// CHECK-LABEL: func.func @trsm
// CHECK-NOT: custom_call
// CHECK-NOT: stablehlo.triangular_solve
// CHECK: scf.for
// CHECK: stablehlo.dot_general
// CHECK: return
func.func @trsm(%a: tensor<4x4xf64>, %b: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %0 = stablehlo.custom_call @lapack_dtrsm_ffi(%a, %b) {mhlo.backend_config = {diag = 85 : ui8, side = 82 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=3, l=4, m=3, n=4}, custom>} : (tensor<4x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

// -----

// getrf: one scf.for step per column, carrying the factors, the pivots and `info`.
// The pivot is the first largest |A[i, k]| at or below row k; the rows are swapped by
// selection (each batch member has its own pivot), then eliminated below the pivot.
// CHECK-LABEL: func.func @getrf
// CHECK: %[[LU:.*]]:3 = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2xi32>)
// CHECK: stablehlo.abs
// CHECK: stablehlo.reduce{{.*}}applies stablehlo.maximum
// CHECK: stablehlo.reduce{{.*}}applies stablehlo.minimum
// CHECK: stablehlo.divide
// CHECK: stablehlo.multiply
// CHECK: stablehlo.subtract
// CHECK: stablehlo.dynamic_update_slice
// CHECK: scf.yield
// CHECK: return %[[LU]]#0, %[[LU]]#1, %[[LU]]#2
func.func @getrf(%a: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2xi32>) {
  %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([b, i, j])->([b, k, l], [b, m], [b]) {b=2, i=4, j=3, k=4, l=3, m=3}, custom>} : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2xi32>
}

// -----

// Other custom calls are left for the stage contract to report.
// CHECK-LABEL: func.func @other
// CHECK: stablehlo.custom_call @my_kernel
func.func @other(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// geqrf: one Householder reflector per column (tau = 0 when the column below the
// diagonal is zero), applied to the columns on its right; orgqr applies them to the
// identity, last first.
// CHECK-LABEL: func.func @qr
// CHECK-NOT: custom_call
// CHECK: %[[QR:.*]]:2 = scf.for {{.*}} -> (tensor<5x3xf64>, tensor<3xf64>)
// CHECK: stablehlo.sqrt
// CHECK: stablehlo.compare LT
// CHECK: scf.yield
// CHECK: %[[Q:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<5x3xf64>)
// CHECK: arith.subi
// CHECK: scf.yield
// CHECK: return %[[Q]], %[[QR]]#0
func.func @qr(%a: tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<5x3xf64>) {
  %0:2 = stablehlo.custom_call @lapack_dgeqrf_ffi(%a) {mhlo.backend_config = {}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m]) {i=5, j=3, k=5, l=3, m=3}, custom>} : (tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3xf64>)
  %1 = stablehlo.custom_call @lapack_dorgqr_ffi(%0#0, %0#1) {mhlo.backend_config = {}} : (tensor<5x3xf64>, tensor<3xf64>) -> tensor<5x3xf64>
  return %1, %0#0 : tensor<5x3xf64>, tensor<5x3xf64>
}

// -----

// syevd: cyclic Jacobi sweeps (sweep, p, q > p) over the matrix of the lower
// triangle, then the columns of V sorted by eigenvalue.
// CHECK-LABEL: func.func @eigh
// CHECK-NOT: custom_call
// CHECK: stablehlo.transpose
// CHECK: scf.for %{{.*}} = %c0 to %c10 step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4 step %c1
// CHECK: stablehlo.rsqrt
// CHECK-NOT: stablehlo.sort
// CHECK: return
func.func @eigh(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<4x4xf32>, tensor<4xf32>, tensor<i32>
}

// -----

// gesdd without vectors (mode 'N'): one-sided Jacobi on the columns of A^T (A is
// wide), the singular values the column norms sorted descending; U and V^T zeros.
// CHECK-LABEL: func.func @singular_values
// CHECK-NOT: custom_call
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c10 step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1
// CHECK: stablehlo.rsqrt
// CHECK: stablehlo.sqrt %{{.*}} : tensor<3xf32>
// CHECK: return %arg0,
func.func @singular_values(%a: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<5x5xf32>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%a) {mhlo.backend_config = {mode = 78 : ui8}} : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<5x5xf32>, tensor<i32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<3x5xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<5x5xf32>, tensor<i32>
}

// -----

// gesdd with vectors (mode 'S'): the rotations also accumulate in V; U is the Q of
// a Householder QR of the normalised columns, written as LAPACK calls and lowered
// at once, so no custom call is left.
// CHECK-LABEL: func.func @svd
// CHECK-NOT: custom_call
// CHECK: %[[J:.*]]:2 = scf.for {{.*}} -> (tensor<5x3xf64>, tensor<3x3xf64>)
// CHECK: stablehlo.divide
// CHECK: scf.for {{.*}} -> (tensor<5x3xf64>, tensor<3xf64>)
// CHECK: scf.for {{.*}} -> (tensor<5x3xf64>)
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0] : (tensor<3x3xf64>) -> tensor<3x3xf64>
// CHECK: return
func.func @svd(%a: tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3xf64>, tensor<5x3xf64>, tensor<3x3xf64>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_dgesdd_ffi(%a) {mhlo.backend_config = {mode = 83 : ui8}} : (tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3xf64>, tensor<5x3xf64>, tensor<3x3xf64>, tensor<i32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<5x3xf64>, tensor<3xf64>, tensor<5x3xf64>, tensor<3x3xf64>, tensor<i32>
}
