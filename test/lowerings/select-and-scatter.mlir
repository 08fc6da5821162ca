// RUN: mlxc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// Max pooling's gradient: the result starts as the init value; per source element a
// loop over its window keeps the selected value, whether one was found and where it
// is; the source is then added there. Without padding no window leaves the operand,
// so there is no bounds check.
// CHECK-LABEL: func.func @max_pool_grad
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>, %[[G:.*]]: tensor<2x3xf32>)
// CHECK-NOT: stablehlo.select_and_scatter
// CHECK: %[[INIT:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
// CHECK: %[[R:.*]] = scf.for %[[I:[^ ]*]] = {{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK:   scf.for %[[J:[^ ]*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK:     %[[SEL:.*]]:4 = scf.for {{.*}} -> (f32, i1, index, index)
// CHECK:       scf.for
// CHECK-NOT:     arith.cmpi
// CHECK:         %[[V:.*]] = tensor.extract %[[X]]
// CHECK:         %[[KEEP:.*]] = arith.cmpf oge, %{{.*}}, %[[V]] : f32
// CHECK:     scf.if %[[SEL]]#1 -> (tensor<4x6xf32>)
// CHECK:       %[[OLD:.*]] = tensor.extract %[[ACC]][%[[SEL]]#2, %[[SEL]]#3]
// CHECK:       %[[S:.*]] = tensor.extract %[[G]][%[[I]], %[[J]]]
// CHECK:       %[[SUM:.*]] = arith.addf %[[OLD]], %[[S]] : f32
// CHECK:       tensor.insert %[[SUM]] into %[[ACC]][%[[SEL]]#2, %[[SEL]]#3]
// CHECK: return %[[R]]
func.func @max_pool_grad(%x: tensor<4x6xf32>, %g: tensor<2x3xf32>) -> tensor<4x6xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %g, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
     : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

// Padding on dimension 0 only: that dimension is checked (position = 3 * i + w - 1),
// dimension 1 is not. A select that is not one simple op (a compare of negations here)
// stays StableHLO on rank-0 tensors, and so does the scatter then: unsigned elements
// reach both regions as they are.
// CHECK-LABEL: func.func @padded
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK:   scf.for %[[J:[^ ]*]] =
// CHECK:     scf.for %[[W:[^ ]*]] =
// CHECK:     %[[BASE:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:     %[[OFF:.*]] = arith.subi %[[W]], %{{.*}} : index
// CHECK:     %[[POS:.*]] = arith.addi %[[BASE]], %[[OFF]] : index
// CHECK:     arith.cmpi sge, %[[POS]]
// CHECK:     arith.cmpi sle, %[[POS]]
// CHECK-NOT: arith.cmpi
// CHECK:     scf.if
// CHECK:       tensor.from_elements {{.*}} : tensor<ui8>
// CHECK:       stablehlo.not
// CHECK:       stablehlo.compare  LT, {{.*}} UNSIGNED
// CHECK:       tensor.extract {{.*}} : tensor<i1>
// CHECK:     scf.if
// CHECK:       stablehlo.add {{.*}} : tensor<ui8>
func.func @padded(%x: tensor<6x2xui8>, %s: tensor<2x2xui8>) -> tensor<6x2xui8> {
  %zero = stablehlo.constant dense<0> : tensor<ui8>
  %r = "stablehlo.select_and_scatter"(%x, %s, %zero) ({
  ^bb0(%a: tensor<ui8>, %b: tensor<ui8>):
    %na = stablehlo.not %a : tensor<ui8>
    %nb = stablehlo.not %b : tensor<ui8>
    %c = stablehlo.compare LT, %na, %nb, UNSIGNED : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<ui8>, %b: tensor<ui8>):
    %t = stablehlo.add %a, %b : tensor<ui8>
    stablehlo.return %t : tensor<ui8>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 3, 1>,
      padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>}
     : (tensor<6x2xui8>, tensor<2x2xui8>, tensor<ui8>) -> tensor<6x2xui8>
  return %r : tensor<6x2xui8>
}

// -----

// Unsigned elements with simple regions: signless views, an unsigned compare and add.
// CHECK-LABEL: func.func @unsigned
// CHECK: stablehlo.bitcast_convert %arg0 : (tensor<4xui16>) -> tensor<4xi16>
// CHECK: stablehlo.broadcast_in_dim {{.*}} -> tensor<4xi16>
// CHECK: arith.cmpi uge, {{.*}} : i16
// CHECK: arith.addi {{.*}} : i16
// CHECK: stablehlo.bitcast_convert {{.*}} : (tensor<4xi16>) -> tensor<4xui16>
func.func @unsigned(%x: tensor<4xui16>, %s: tensor<2xui16>) -> tensor<4xui16> {
  %zero = stablehlo.constant dense<0> : tensor<ui16>
  %r = "stablehlo.select_and_scatter"(%x, %s, %zero) ({
  ^bb0(%a: tensor<ui16>, %b: tensor<ui16>):
    %c = stablehlo.compare GE, %a, %b, UNSIGNED : (tensor<ui16>, tensor<ui16>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<ui16>, %b: tensor<ui16>):
    %t = stablehlo.add %a, %b : tensor<ui16>
    stablehlo.return %t : tensor<ui16>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}
     : (tensor<4xui16>, tensor<2xui16>, tensor<ui16>) -> tensor<4xui16>
  return %r : tensor<4xui16>
}

// -----

func.func @dynamic(%x: tensor<?xf32>, %g: tensor<2xf32>) -> tensor<?xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{mlxc lowers stablehlo.select_and_scatter only with static shapes}}
  %r = "stablehlo.select_and_scatter"(%x, %g, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}
     : (tensor<?xf32>, tensor<2xf32>, tensor<f32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
