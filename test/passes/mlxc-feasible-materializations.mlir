// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-feasible-materializations)' | FileCheck %s

// One value materialized into two iteration arguments (cse made a + b and b + a one
// value) is yielded plainly to both; a value materialized once keeps its materialization.
// CHECK-LABEL: func.func @main
// CHECK: scf.for
// CHECK: %[[V:.*]] = arith.addi
// CHECK-NOT: materialize_in_destination %[[V]]
// CHECK: %[[K:.*]] = bufferization.materialize_in_destination %{{.*}} in %{{.*}}
// CHECK: scf.yield %[[V]], %[[V]], %[[K]]
func.func @main(%a: tensor<i8>, %n: tensor<i8>) -> (tensor<i8>, tensor<i8>, tensor<i8>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %a, %y = %a, %k = %n) -> (tensor<i8>, tensor<i8>, tensor<i8>) {
    %s = arith.addi %x, %y : tensor<i8>
    %t = arith.addi %k, %k : tensor<i8>
    %m1 = bufferization.materialize_in_destination %s in %x : (tensor<i8>, tensor<i8>) -> tensor<i8>
    %m2 = bufferization.materialize_in_destination %s in %y : (tensor<i8>, tensor<i8>) -> tensor<i8>
    %m3 = bufferization.materialize_in_destination %t in %k : (tensor<i8>, tensor<i8>) -> tensor<i8>
    scf.yield %m1, %m2, %m3 : tensor<i8>, tensor<i8>, tensor<i8>
  }
  return %r#0, %r#1, %r#2 : tensor<i8>, tensor<i8>, tensor<i8>
}

// A one-trip loop folded away: the destination is the function's argument, which is
// read-only; the value is returned as it is.
// CHECK-LABEL: func.func @folded
// CHECK-NOT: materialize_in_destination
// CHECK: return %[[S:.*]] :
func.func @folded(%x: tensor<f64>, %y: tensor<f64>) -> tensor<f64> {
  %s = arith.maximumf %x, %y : tensor<f64>
  %m = bufferization.materialize_in_destination %s in %x : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %m : tensor<f64>
}
