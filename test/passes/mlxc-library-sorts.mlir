// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-library-sorts)' | FileCheck %s

// jnp.sort's comparator (-0 as +0, NaN as one NaN, then total order) along the last
// dimension: the rows go to the runtime's radix sort (flag 1: canonicalize), read from a
// read-only buffer and written to a fresh one.
// CHECK-LABEL: func.func @jax_sort
// CHECK: %[[IN:.*]] = bufferization.to_buffer %arg0 read_only : tensor<4x16xf32> to memref<4x16xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: call @mlxc_sort_f32_rows(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// CHECK-NOT: stablehlo.sort
// CHECK: func.func private @mlxc_sort_f32_rows(memref<f32>, memref<f32>, index, index, i32)
func.func @jax_sort(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.compare EQ, %a, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %2 = stablehlo.select %1, %zero, %a : tensor<i1>, tensor<f32>
    %3 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = stablehlo.select %3, %nan, %2 : tensor<i1>, tensor<f32>
    %5 = stablehlo.compare EQ, %b, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = stablehlo.select %5, %zero, %b : tensor<i1>, tensor<f32>
    %7 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %8 = stablehlo.select %7, %nan, %6 : tensor<i1>, tensor<f32>
    %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %9 : tensor<i1>
  }) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Plain total order along the first dimension: flag 0, and the rows are the columns,
// transposed in and out.
// CHECK-LABEL: func.func @total_order_columns
// CHECK: stablehlo.transpose %arg0, dims = [1, 0]
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: call @mlxc_sort_f32_rows(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]])
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0]
func.func @total_order_columns(%x: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<16x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}

// -----

// A plain float comparison is no strict weak order with NaNs, a descending comparator is
// not the kernel's, and two operands are a key-value sort: all stay sorts.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: stablehlo.sort
// CHECK-NOT: mlxc_sort_f32_rows
func.func @kept(%x: tensor<8xf32>, %i: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<8xf32>) -> tensor<8xf32>
  %3:2 = "stablehlo.sort"(%x, %i) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %1 = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return %0, %2, %3#0 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
