// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// One pass over each row: floats compared as integers in total order (bits with the
// magnitude flipped when negative), an element taken while fewer than k are kept or
// when strictly above the k-th, moved in past the kept elements strictly below it
// (ties keep increasing indices), then the values read back through the indices.
// CHECK-LABEL: func.func @rows
// CHECK: %[[X2:.*]] = stablehlo.reshape %arg0 : (tensor<2x3x40xf32>) -> tensor<6x40xf32>
// CHECK: %[[KEYS:.*]] = tensor.empty() : tensor<4xi32>
// CHECK: %[[IDX:.*]] = tensor.empty() : tensor<4xindex>
// CHECK: scf.for %[[ROW:[^ ]*]] = {{.*}} iter_args({{.*}} = %[[KEYS]], {{.*}} = %[[IDX]], {{.*}}, {{.*}})
// CHECK: scf.for %[[J:[^ ]*]] = {{.*}} -> (tensor<4xi32>, tensor<4xindex>, index, i32)
// CHECK: %[[E:.*]] = tensor.extract %[[X2]][%[[ROW]], %[[J]]] : tensor<6x40xf32>
// CHECK: %[[B:.*]] = arith.bitcast %[[E]] : f32 to i32
// CHECK: %[[S:.*]] = arith.shrsi %[[B]], %{{.*}} : i32
// CHECK: %[[F:.*]] = arith.andi %[[S]], %{{.*}} : i32
// CHECK: %[[KEY:.*]] = arith.xori %[[B]], %[[F]] : i32
// CHECK: %[[ROOM:.*]] = arith.cmpi ult
// CHECK: %[[BEATS:.*]] = arith.cmpi sgt, %[[KEY]]
// CHECK: %[[TAKE:.*]] = arith.ori %[[ROOM]], %[[BEATS]]
// CHECK: scf.if %[[TAKE]]
// CHECK: scf.while
// CHECK: arith.cmpi slt, %{{.*}}, %[[KEY]] : i32
// CHECK: scf.condition
// CHECK: tensor.insert %[[KEY]]
// CHECK: tensor.insert %[[J]]
// CHECK: tensor.extract %[[X2]]
// CHECK: stablehlo.reshape {{.*}} -> tensor<2x3x4xf32>
// CHECK: stablehlo.reshape {{.*}} -> tensor<2x3x4xi32>
func.func @rows(%x: tensor<2x3x40xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xi32>) {
  %0:2 = stablehlo.custom_call @mlxc.top_k(%x) : (tensor<2x3x40xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xi32>)
  return %0#0, %0#1 : tensor<2x3x4xf32>, tensor<2x3x4xi32>
}

// -----

// Integers are their own keys.
// CHECK-LABEL: func.func @ints
// CHECK-NOT: arith.bitcast
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : i8
func.func @ints(%x: tensor<30xi8>) -> (tensor<3xi8>, tensor<3xi32>) {
  %0:2 = stablehlo.custom_call @mlxc.top_k(%x) : (tensor<30xi8>) -> (tensor<3xi8>, tensor<3xi32>)
  return %0#0, %0#1 : tensor<3xi8>, tensor<3xi32>
}
