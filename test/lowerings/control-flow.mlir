// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// while: the condition region becomes scf.while's before region (the predicate
// computed into one more carried rank-0 buffer, then extracted), the body its after
// region. A scalar the body computes is bound for its carried buffer; ui32 stays as it
// is until the signless conversion after legalization.
// CHECK-LABEL: func.func @while_loop
// CHECK-SAME: (%[[N:.*]]: tensor<i64>, %[[X:.*]]: tensor<4xui32>)
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0>
// CHECK: %[[ONE:.*]] = stablehlo.constant dense<1>
// CHECK: %[[SCRATCH:.*]] = tensor.empty() : tensor<i1>
// CHECK: %[[W:.*]]:3 = scf.while (%[[I:.*]] = %[[ZERO]], %[[ACC:.*]] = %[[X]], %[[S:.*]] = %[[SCRATCH]]) : (tensor<i64>, tensor<4xui32>, tensor<i1>) -> (tensor<i64>, tensor<4xui32>, tensor<i1>) {
// CHECK:   %[[C:.*]] = stablehlo.compare LT, %[[I]], %[[N]]
// CHECK:   %[[CS:.*]] = bufferization.materialize_in_destination %[[C]] in %[[S]]
// CHECK:   %[[P:.*]] = tensor.extract %[[CS]][] : tensor<i1>
// CHECK:   scf.condition(%[[P]]) %[[I]], %[[ACC]], %[[CS]] : tensor<i64>, tensor<4xui32>, tensor<i1>
// CHECK: } do {
// CHECK: ^bb0(%[[I2:.*]]: tensor<i64>, %[[ACC2:.*]]: tensor<4xui32>, %[[S2:.*]]: tensor<i1>):
// CHECK:   %[[A:.*]] = stablehlo.add %[[ACC2]], %[[ACC2]] : tensor<4xui32>
// CHECK:   %[[NI:.*]] = stablehlo.add %[[I2]], %[[ONE]] : tensor<i64>
// CHECK:   %[[Y0:.*]] = bufferization.materialize_in_destination %[[NI]] in %[[I2]]
// CHECK-NOT: materialize_in_destination
// CHECK:   scf.yield %[[Y0]], %[[A]], %[[S2]] : tensor<i64>, tensor<4xui32>, tensor<i1>
// CHECK: return %[[W]]#0, %[[W]]#1
// CHECK-NOT: stablehlo.while
func.func @while_loop(%n: tensor<i64>, %x: tensor<4xui32>) -> (tensor<i64>, tensor<4xui32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r0, %r1 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i64>, tensor<4xui32>
  cond {
    %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %a = stablehlo.add %acc, %acc : tensor<4xui32>
    %ni = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %ni, %a : tensor<i64>, tensor<4xui32>
  }
  return %r0, %r1 : tensor<i64>, tensor<4xui32>
}

// -----

// A counted loop (lax.scan, fori_loop with constant bounds): `i < 8` on a counter
// that starts at the constant 2 and steps by one becomes scf.for from 2 to 8. The
// body reads the counter as a rank-0 tensor rebuilt from the induction variable; the
// counter is neither carried nor yielded, and after the loop it is the bound.
// CHECK-LABEL: func.func @counted
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[XS:.*]]: tensor<8x4xf32>)
// CHECK-DAG: %[[BOUND:.*]] = stablehlo.constant dense<8> : tensor<i32>
// CHECK-DAG: %[[LO:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[HI:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[STEP:.*]] = arith.constant 1 : index
// CHECK: %[[F:.*]] = scf.for %[[IV:.*]] = %[[LO]] to %[[HI]] step %[[STEP]] iter_args(%[[H:.*]] = %[[X]]) -> (tensor<4xf32>) {
// CHECK:   %[[I:.*]] = arith.index_cast %[[IV]] : index to i32
// CHECK:   %[[T:.*]] = tensor.from_elements %[[I]] : tensor<i32>
// CHECK:   stablehlo.dynamic_slice %[[XS]], %[[T]]
// CHECK:   %[[A:.*]] = stablehlo.add %[[H]], %{{.*}} : tensor<4xf32>
// CHECK:   scf.yield %[[A]] : tensor<4xf32>
// CHECK: return %[[BOUND]], %[[F]]
// CHECK-NOT: scf.while
func.func @counted(%x: tensor<4xf32>, %xs: tensor<8x4xf32>) -> (tensor<i32>, tensor<4xf32>) {
  %c0 = stablehlo.constant dense<2> : tensor<i32>
  %r0, %r1 = stablehlo.while(%i = %c0, %h = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<8> : tensor<i32>
    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %row = stablehlo.dynamic_slice %xs, %i, %z, sizes = [1, 4] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    %r = stablehlo.reshape %row : (tensor<1x4xf32>) -> tensor<4xf32>
    %a = stablehlo.add %h, %r : tensor<4xf32>
    %ni = stablehlo.add %one, %i : tensor<i32>
    stablehlo.return %ni, %a : tensor<i32>, tensor<4xf32>
  }
  return %r0, %r1 : tensor<i32>, tensor<4xf32>
}

// -----

// Not counted loops, which stay scf.while: a start not below the bound (the loop must
// visibly run, see control_flow.py), an unsigned comparison, a step of 2, and a
// condition that reads another carried value.
// CHECK-LABEL: func.func @not_counted
// CHECK-COUNT-4: scf.while
// CHECK-NOT: scf.for
func.func @not_counted(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c9 = stablehlo.constant dense<9> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %a:2 = stablehlo.while(%i = %c9, %v = %x) : tensor<i32>, tensor<f32>
  cond {
    %c = stablehlo.compare LT, %i, %c9, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %ni = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %ni, %v : tensor<i32>, tensor<f32>
  }
  %b:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<f32>
  cond {
    %c = stablehlo.compare LT, %i, %c9, UNSIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %ni = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %ni, %v : tensor<i32>, tensor<f32>
  }
  %e:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<f32>
  cond {
    %c = stablehlo.compare LT, %i, %c9, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %ni = stablehlo.add %i, %two : tensor<i32>
    stablehlo.return %ni, %v : tensor<i32>, tensor<f32>
  }
  %d:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<f32>
  cond {
    %c = stablehlo.compare LT, %i, %c9, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %p = stablehlo.compare GT, %v, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %q = stablehlo.and %c, %p : tensor<i1>
    stablehlo.return %q : tensor<i1>
  } do {
    %ni = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %ni, %v : tensor<i32>, tensor<f32>
  }
  return %a#1, %b#1, %e#1, %d#1 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// Values that may already live in a carried buffer, or whose buffer is read after the
// yield, are yielded as they are: here the carried values swap places.
// CHECK-LABEL: func.func @while_swap
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK: } do {
// CHECK: ^bb0(%[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>, %[[S:.*]]: tensor<i1>):
// CHECK-NOT: materialize_in_destination
// CHECK: scf.yield %[[B]], %[[A]], %[[S]]
func.func @while_swap(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %r0, %r1 = stablehlo.while(%x = %a, %y = %b) : tensor<3xf32>, tensor<3xf32>
  cond {
    %t = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    stablehlo.return %y, %x : tensor<3xf32>, tensor<3xf32>
  }
  return %r0 : tensor<3xf32>
}

// -----

// if: scf.if on the extracted predicate, both branches moved over.
// CHECK-LABEL: func.func @if_else
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<2xf32>)
// CHECK: %[[B:.*]] = tensor.extract %[[P]][] : tensor<i1>
// CHECK: %[[R:.*]] = scf.if %[[B]] -> (tensor<2xf32>) {
// CHECK:   %[[S:.*]] = stablehlo.add %[[X]], %[[X]]
// CHECK:   scf.yield %[[S]]
// CHECK: } else {
// CHECK:   scf.yield %[[X]]
// CHECK: return %[[R]]
func.func @if_else(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.if"(%p) ({
    %0 = stablehlo.add %x, %x : tensor<2xf32>
    stablehlo.return %0 : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// case: a chain of scf.if (one-shot bufferization gets the conflicts of scf.if's
// results right, not those of scf.index_switch) whose last else is the last branch,
// so an index outside [0, 3) takes it, as the spec says.
// CHECK-LABEL: func.func @case3
// CHECK-SAME: (%[[K:.*]]: tensor<i32>, %[[X:.*]]: tensor<2xf32>)
// CHECK: %[[E:.*]] = tensor.extract %[[K]][] : tensor<i32>
// CHECK: %[[I:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[I]], %[[C0]] : index
// CHECK: %[[R:.*]] = scf.if %[[IS0]] -> (tensor<2xf32>) {
// CHECK:   stablehlo.add
// CHECK: } else {
// CHECK:   %[[C1:.*]] = arith.constant 1 : index
// CHECK:   %[[IS1:.*]] = arith.cmpi eq, %[[I]], %[[C1]] : index
// CHECK:   %[[R1:.*]] = scf.if %[[IS1]] -> (tensor<2xf32>) {
// CHECK:     stablehlo.multiply
// CHECK:   } else {
// CHECK:     stablehlo.negate
// CHECK:   scf.yield %[[R1]]
// CHECK-NOT: scf.index_switch
// CHECK: return %[[R]]
func.func @case3(%k: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.case"(%k) ({
    %0 = stablehlo.add %x, %x : tensor<2xf32>
    stablehlo.return %0 : tensor<2xf32>
  }, {
    %0 = stablehlo.multiply %x, %x : tensor<2xf32>
    stablehlo.return %0 : tensor<2xf32>
  }, {
    %0 = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %0 : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// A single branch runs whatever the index: its ops in place of the case.
// CHECK-LABEL: func.func @case1
// CHECK-SAME: (%[[K:.*]]: tensor<i32>, %[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT: %[[N:.*]] = stablehlo.negate %[[X]]
// CHECK-NEXT: return %[[N]]
func.func @case1(%k: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.case"(%k) ({
    %0 = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %0 : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Nested regions are rewritten inside out: the inner while sits in the outer body.
// CHECK-LABEL: func.func @nested
// CHECK: scf.while
// CHECK: } do {
// CHECK: scf.if
// CHECK-NOT: stablehlo.while
// CHECK-NOT: stablehlo.if
func.func @nested(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.while(%v = %x) : tensor<f32>
  cond {
    stablehlo.return %p : tensor<i1>
  } do {
    %s = "stablehlo.if"(%p) ({
      %0 = stablehlo.add %v, %v : tensor<f32>
      stablehlo.return %0 : tensor<f32>
    }, {
      stablehlo.return %v : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    stablehlo.return %s : tensor<f32>
  }
  return %r : tensor<f32>
}
