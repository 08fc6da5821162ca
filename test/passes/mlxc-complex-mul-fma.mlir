// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-complex-mul-fma)' | FileCheck %s

// (a + bi)(c + di): re = fma(a, c, -(b*d)), im = fma(b, c, a*d); other ops stay.
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[A:.*]] = complex.re %arg0 : complex<f32>
// CHECK-DAG: %[[B:.*]] = complex.im %arg0 : complex<f32>
// CHECK-DAG: %[[C:.*]] = complex.re %arg1 : complex<f32>
// CHECK-DAG: %[[D:.*]] = complex.im %arg1 : complex<f32>
// CHECK: %[[BD:.*]] = arith.mulf %[[B]], %[[D]] : f32
// CHECK: %[[NBD:.*]] = arith.negf %[[BD]] : f32
// CHECK: %[[RE:.*]] = math.fma %[[A]], %[[C]], %[[NBD]] : f32
// CHECK: %[[AD:.*]] = arith.mulf %[[A]], %[[D]] : f32
// CHECK: %[[IM:.*]] = math.fma %[[B]], %[[C]], %[[AD]] : f32
// CHECK: %[[P:.*]] = complex.create %[[RE]], %[[IM]] : complex<f32>
// CHECK-NOT: complex.mul
// CHECK: %[[S:.*]] = complex.add %[[P]], %arg1 : complex<f32>
// CHECK: return %[[S]]
func.func @main(%x: complex<f32>, %y: complex<f32>) -> complex<f32> {
  %0 = complex.mul %x, %y : complex<f32>
  %1 = complex.add %0, %y : complex<f32>
  return %1 : complex<f32>
}
