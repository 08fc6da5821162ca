// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// The triangle is inverted row by row in an scf.for (XLA's algorithm), then
// multiplied with B; nothing of triangular_solve is left.
// CHECK-LABEL: func.func @left_lower
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x3xf32>, %[[B:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT: triangular_solve
// CHECK: %[[LOWER:.*]] = stablehlo.compare GE
// CHECK: %[[M:.*]] = stablehlo.select %[[LOWER]], %[[A]]
// CHECK: %[[INV:.*]] = scf.for %{{.*}} = %c1 to %c3 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x3x3xf32>)
// CHECK: stablehlo.dynamic_slice
// CHECK: stablehlo.dot_general {{.*}} batching_dims = [0] x [0], contracting_dims = [2] x [1]
// CHECK: stablehlo.dynamic_update_slice
// CHECK: scf.yield
// CHECK: %[[SCALED:.*]] = stablehlo.divide %[[INV]]
// CHECK: %[[X:.*]] = stablehlo.dot_general %[[SCALED]], %[[B]], batching_dims = [0] x [0], contracting_dims = [2] x [1]
// CHECK: return %[[X]] : tensor<2x3x4xf32>
func.func @left_lower(%a: tensor<2x3x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Right side, transposed: X A^T = B is B @ inv^T; upper rows are inverted from the
// last one up; a unit diagonal replaces A's diagonal by ones.
// CHECK-LABEL: func.func @right_upper_transpose_unit
// CHECK-SAME: (%[[A:.*]]: tensor<3x3xf64>, %[[B:.*]]: tensor<5x3xf64>)
// CHECK: stablehlo.compare LT
// CHECK: stablehlo.add
// CHECK: scf.for
// CHECK: arith.subi %c2, %{{.*}} : index
// CHECK: %[[INV:.*]] = stablehlo.divide
// CHECK: %[[X:.*]] = stablehlo.dot_general %[[B]], %[[INV]], contracting_dims = [1] x [1]
// CHECK: return %[[X]] : tensor<5x3xf64>
func.func @right_upper_transpose_unit(%a: tensor<3x3xf64>, %b: tensor<5x3xf64>) -> tensor<5x3xf64> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = false, unit_diagonal = true, transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<3x3xf64>, tensor<5x3xf64>) -> tensor<5x3xf64>
  return %0 : tensor<5x3xf64>
}

// -----

// The adjoint conjugates the inverse; bf16 is solved in f32.
// CHECK-LABEL: func.func @adjoint
// CHECK: stablehlo.imag
// CHECK: stablehlo.negate
// CHECK: stablehlo.complex
// CHECK: stablehlo.dot_general {{.*}} contracting_dims = [0] x [0]
func.func @adjoint(%a: tensor<2x2xcomplex<f32>>, %b: tensor<2x1xcomplex<f32>>) -> tensor<2x1xcomplex<f32>> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<2x2xcomplex<f32>>, tensor<2x1xcomplex<f32>>) -> tensor<2x1xcomplex<f32>>
  return %0 : tensor<2x1xcomplex<f32>>
}

// -----

// A 1x1 system is a division, as in XLA.
// CHECK-LABEL: func.func @one_by_one
// CHECK-SAME: (%[[A:.*]]: tensor<1x1xbf16>, %[[B:.*]]: tensor<1x4xbf16>)
// CHECK-NOT: scf.for
// CHECK: %[[A32:.*]] = stablehlo.convert %[[A]] : (tensor<1x1xbf16>) -> tensor<1x1xf32>
// CHECK: %[[B32:.*]] = stablehlo.convert %[[B]] : (tensor<1x4xbf16>) -> tensor<1x4xf32>
// CHECK: %[[D:.*]] = stablehlo.broadcast_in_dim %[[A32]], dims = [0, 1]
// CHECK: %[[X:.*]] = stablehlo.divide %[[B32]], %[[D]]
// CHECK: %[[R:.*]] = stablehlo.convert %[[X]] : (tensor<1x4xf32>) -> tensor<1x4xbf16>
// CHECK: return %[[R]]
func.func @one_by_one(%a: tensor<1x1xbf16>, %b: tensor<1x4xbf16>) -> tensor<1x4xbf16> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<1x1xbf16>, tensor<1x4xbf16>) -> tensor<1x4xbf16>
  return %0 : tensor<1x4xbf16>
}

// -----

// A dot's `algorithm` (a minimum precision, which mlxc always meets) is dropped, so
// that stablehlo-legalize-to-linalg accepts the dot.
// CHECK-LABEL: func.func @dot_algorithm
// CHECK: stablehlo.dot_general
// CHECK-NOT: algorithm
// CHECK: return
func.func @dot_algorithm(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0],
    algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32,
                 lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1,
                 allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
