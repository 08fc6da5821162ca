// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// gehrd as JAX exports it (ilo = low = 1, ihi = high = n): one scf.for step per column
// k = 0 .. n-2, carrying the matrix and the taus. A step makes ?larfg's reflector
// (sqrt of the column's squares), applies it from the right (A v: a sum across the
// columns, dimension 2) and its adjoint from the left (v^H A: across the rows), then
// stores beta and v in column k and tau at k.
// CHECK-LABEL: func.func @gehrd
// CHECK-NOT: custom_call
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<2xi32>
// CHECK: %[[H:.*]]:2 = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %arg0, %{{.*}} = %{{.*}}) -> (tensor<2x4x4xf32>, tensor<2x3xf32>)
// CHECK: stablehlo.sqrt
// CHECK: stablehlo.reduce{{.*}}applies stablehlo.add across dimensions = [2] : (tensor<2x4x4xf32>
// CHECK: stablehlo.reduce{{.*}}applies stablehlo.add across dimensions = [1] : (tensor<2x4x4xf32>
// CHECK: stablehlo.dynamic_update_slice
// CHECK: scf.yield
// CHECK: return %[[H]]#0, %[[H]]#1, %[[ZERO]]
func.func @gehrd(%a: tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x3xf32>, tensor<2xi32>) {
  %0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) {mhlo.backend_config = {high = 4 : i32, low = 1 : i32}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i]) {i=2, j=4, k=4, l=4, m=4, n=3}, custom>} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x3xf32>, tensor<2xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x4x4xf32>, tensor<2x3xf32>, tensor<2xi32>
}

// -----

// Other bounds: steps k = ilo-1 .. ihi-2 only (here 1 .. 3, three steps starting at 1),
// rows at or past ihi masked out.
// CHECK-LABEL: func.func @gehrd_bounds
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1
// CHECK: %[[START:.*]] = stablehlo.constant dense<1> : tensor<i64>
// CHECK: stablehlo.add %{{.*}}, %[[START]] : tensor<i64>
// CHECK: stablehlo.constant dense<5> : tensor<6x1xi64>
func.func @gehrd_bounds(%a: tensor<6x6xf64>) -> (tensor<6x6xf64>, tensor<5xf64>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_dgehrd_ffi(%a) {mhlo.backend_config = {high = 5 : i32, low = 2 : i32}} : (tensor<6x6xf64>) -> (tensor<6x6xf64>, tensor<5xf64>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<6x6xf64>, tensor<5xf64>, tensor<i32>
}

// -----

// Nothing to reduce (ilo = ihi): A as it is, zero taus, no loop.
// CHECK-LABEL: func.func @gehrd_nothing
// CHECK-NOT: scf.for
// CHECK: %[[TAUS:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %arg0, %[[TAUS]]
func.func @gehrd_nothing(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<3xf32>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) {mhlo.backend_config = {high = 2 : i32, low = 2 : i32}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<3xf32>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<4x4xf32>, tensor<3xf32>, tensor<i32>
}

// -----

// sytrd, uplo = 'L': the symmetric matrix from the lower triangle (a select against
// the transpose), then steps k = 0 .. n-2 carrying it, the taus and e; the result has
// T and the reflectors below the diagonal and A's own entries above it.
// CHECK-LABEL: func.func @sytrd_lower
// CHECK: %[[T:.*]] = stablehlo.transpose %arg0
// CHECK: %[[GE:.*]] = stablehlo.compare GE
// CHECK: %[[FULL:.*]] = stablehlo.select %[[GE]], %arg0, %[[T]]
// CHECK: %[[R:.*]]:3 = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %[[FULL]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<4x4xf64>, tensor<3xf64>, tensor<3xf64>)
// CHECK-NOT: arith.subi
// CHECK: stablehlo.sqrt
// CHECK: stablehlo.reduce{{.*}}across dimensions = [1] : (tensor<4x4xf64>
// CHECK: scf.yield
// CHECK: %[[D:.*]] = stablehlo.reduce{{.*}} -> tensor<4xf64>
// CHECK: %[[GT:.*]] = stablehlo.compare GT
// CHECK: %[[OUT:.*]] = stablehlo.select %[[GT]], %[[R]]#0, %{{.*}}
// CHECK: return %[[OUT]], %[[D]], %[[R]]#2, %[[R]]#1
func.func @sytrd_lower(%a: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_dsytrd_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<i32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<4x4xf64>, tensor<4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<i32>
}

// -----

// hetrd, uplo = 'U': the Hermitian matrix from the upper triangle and the conjugate
// transpose, its diagonal made real (as ?hetd2 reads it), steps k = n-2 .. 0 (counting
// down), and the diagonal kept real after each update, as ?her2 keeps it.
// CHECK-LABEL: func.func @hetrd_upper
// CHECK: stablehlo.transpose %arg0
// CHECK: stablehlo.negate
// CHECK: stablehlo.compare LE
// CHECK: stablehlo.real
// CHECK: scf.for %{{.*}} -> (tensor<3x3xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<2xf32>)
// CHECK: arith.subi %c1{{.*}}, %arg1 : index
// CHECK: scf.yield
// CHECK: return %{{.*}} : tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>, tensor<i32>
func.func @hetrd_upper(%a: tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_chetrd_ffi(%a) {mhlo.backend_config = {uplo = 85 : ui8}} : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>, tensor<i32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>, tensor<i32>
}

// -----

// A 1x1 matrix is already tridiagonal: no loop, empty e and taus.
// CHECK-LABEL: func.func @sytrd_one
// CHECK-NOT: scf.for
// CHECK: return {{.*}} : tensor<2x1x1xf32>, tensor<2x1xf32>, tensor<2x0xf32>, tensor<2x0xf32>, tensor<2xi32>
func.func @sytrd_one(%a: tensor<2x1x1xf32>) -> (tensor<2x1x1xf32>, tensor<2x1xf32>, tensor<2x0xf32>, tensor<2x0xf32>, tensor<2xi32>) {
  %0:5 = stablehlo.custom_call @lapack_ssytrd_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<2x1x1xf32>) -> (tensor<2x1x1xf32>, tensor<2x1xf32>, tensor<2x0xf32>, tensor<2x0xf32>, tensor<2xi32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<2x1x1xf32>, tensor<2x1xf32>, tensor<2x0xf32>, tensor<2x0xf32>, tensor<2xi32>
}
