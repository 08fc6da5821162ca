// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-library-lapack)' | FileCheck %s

// A batched f32 Cholesky (uplo 'L'): the operand goes to the runtime's kernel as a
// read-only buffer, the factor and info are fresh buffers; sizes are the batch and n,
// the flag is `lower`.
// CHECK-LABEL: func.func @potrf
// CHECK: %[[IN:.*]] = bufferization.to_buffer %arg0 read_only : tensor<3x5x5xf32> to memref<3x5x5xf32>
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x5x5xf32>
// CHECK: %[[INFO:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3xi32>
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[LOWER:.*]] = arith.constant 1 : i32
// CHECK: call @mlxc_potrf_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[C3]], %[[C5]], %[[LOWER]]) : (memref<f32>, memref<f32>, memref<i32>, index, index, i32) -> ()
// CHECK: %[[R0:.*]] = bufferization.to_tensor %[[A]] restrict writable
// CHECK: %[[R1:.*]] = bufferization.to_tensor %[[INFO]] restrict writable
// CHECK: return %[[R0]], %[[R1]]
// CHECK-NOT: custom_call
// CHECK: func.func private @mlxc_potrf_f32(memref<f32>, memref<f32>, memref<i32>, index, index, i32)
func.func @potrf(%a: tensor<3x5x5xf32>) -> (tensor<3x5x5xf32>, tensor<3xi32>) {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<3x5x5xf32>) -> (tensor<3x5x5xf32>, tensor<3xi32>)
  return %0#0, %0#1 : tensor<3x5x5xf32>, tensor<3xi32>
}

// -----

// f64 routines have their own entry points. trsm's flags are left, lower, trans and
// unit (side 'R', uplo 'U', trans_x 'T', diag 'U' here); syevd's are lower and vectors;
// gesdd's sizes add U's columns and V^T's rows (reduced: 4 and 4), its flag vectors.
// CHECK-LABEL: func.func @f64_routines
// CHECK: %[[LEFT:.*]] = arith.constant 0 : i32
// CHECK: %[[LOWER:.*]] = arith.constant 0 : i32
// CHECK: %[[TRANS:.*]] = arith.constant 1 : i32
// CHECK: %[[UNIT:.*]] = arith.constant 1 : i32
// CHECK: call @mlxc_trsm_f64(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LEFT]], %[[LOWER]], %[[TRANS]], %[[UNIT]])
// CHECK: call @mlxc_getrf_f64(
// CHECK: call @mlxc_geqrf_f64(
// CHECK: call @mlxc_orgqr_f64(
// CHECK: call @mlxc_syevd_f64(
// CHECK: call @mlxc_gesdd_f64(
// CHECK-NOT: custom_call
// CHECK-DAG: func.func private @mlxc_trsm_f64(memref<f64>, memref<f64>, memref<f64>, index, index, index, i32, i32, i32, i32)
// CHECK-DAG: func.func private @mlxc_getrf_f64(memref<f64>, memref<f64>, memref<i32>, memref<i32>, index, index, index)
// CHECK-DAG: func.func private @mlxc_geqrf_f64(memref<f64>, memref<f64>, memref<f64>, index, index, index)
// CHECK-DAG: func.func private @mlxc_orgqr_f64(memref<f64>, memref<f64>, memref<f64>, index, index, index, index)
// CHECK-DAG: func.func private @mlxc_syevd_f64(memref<f64>, memref<f64>, memref<f64>, memref<i32>, index, index, i32, i32)
// CHECK-DAG: func.func private @mlxc_gesdd_f64(memref<f64>, memref<f64>, memref<f64>, memref<f64>, memref<f64>, memref<i32>, index, index, index, index, index, i32)
func.func @f64_routines(%a: tensor<4x4xf64>, %b: tensor<3x4xf64>, %c: tensor<6x4xf64>)
    -> (tensor<3x4xf64>, tensor<4x4xf64>, tensor<6x4xf64>, tensor<4xf64>, tensor<4x4xf64>, tensor<4xf64>, tensor<6x4xf64>, tensor<4x4xf64>) {
  %0 = stablehlo.custom_call @lapack_dtrsm_ffi(%a, %b) {mhlo.backend_config = {diag = 85 : ui8, side = 82 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}} : (tensor<4x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
  %1:3 = stablehlo.custom_call @lapack_dgetrf_ffi(%a) {mhlo.backend_config = {}} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xi32>, tensor<i32>)
  %2:2 = stablehlo.custom_call @lapack_dgeqrf_ffi(%c) {mhlo.backend_config = {}} : (tensor<6x4xf64>) -> (tensor<6x4xf64>, tensor<4xf64>)
  %3 = stablehlo.custom_call @lapack_dorgqr_ffi(%2#0, %2#1) {mhlo.backend_config = {}} : (tensor<6x4xf64>, tensor<4xf64>) -> tensor<6x4xf64>
  %4:3 = stablehlo.custom_call @lapack_dsyevd_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>, tensor<i32>)
  %5:5 = stablehlo.custom_call @lapack_dgesdd_ffi(%c) {mhlo.backend_config = {mode = 83 : ui8}} : (tensor<6x4xf64>) -> (tensor<6x4xf64>, tensor<4xf64>, tensor<6x4xf64>, tensor<4x4xf64>, tensor<i32>)
  return %0, %1#0, %3, %4#1, %4#0, %5#1, %5#2, %5#3 : tensor<3x4xf64>, tensor<4x4xf64>, tensor<6x4xf64>, tensor<4xf64>, tensor<4x4xf64>, tensor<4xf64>, tensor<6x4xf64>, tensor<4x4xf64>
}

// -----

// Complex types, routines without a kernel and other custom calls stay for
// mlxc-lower-extra-ops (which lowers them or names them).
// CHECK-LABEL: func.func @left_alone
// CHECK: stablehlo.custom_call @lapack_cpotrf_ffi
// CHECK: stablehlo.custom_call @lapack_sgehrd_ffi
// CHECK: stablehlo.custom_call @something_else
// CHECK-NOT: call @mlxc_
func.func @left_alone(%a: tensor<4x4xcomplex<f32>>, %b: tensor<4x4xf32>) -> (tensor<4x4xcomplex<f32>>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %0:2 = stablehlo.custom_call @lapack_cpotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<i32>)
  %1:2 = stablehlo.custom_call @lapack_sgehrd_ffi(%b) {mhlo.backend_config = {high = 4 : i32, low = 1 : i32}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<3xf32>)
  %2 = stablehlo.custom_call @something_else(%b) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0#0, %1#0, %2 : tensor<4x4xcomplex<f32>>, tensor<4x4xf32>, tensor<4x4xf32>
}
