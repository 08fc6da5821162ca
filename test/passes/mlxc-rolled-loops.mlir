// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-rolled-loops)' | FileCheck %s
// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-rolled-loops,convert-scf-to-cf,mlxc-loop-annotations,convert-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM

// A loop around vector code without loop-carried values is kept rolled, and so is the
// loop around it; a reduction loop (iter_args), a scalar loop (LLVM's unrolling is what
// vectorizes it) and a loop that already has a hint are left alone.
// CHECK-DAG: #[[OFF:.*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG: #[[ON:.*]] = #llvm.loop_unroll<full = true>
// CHECK-DAG: #[[KEEP:.*]] = #llvm.loop_annotation<unroll = #[[OFF]]>
// CHECK-DAG: #[[FULL:.*]] = #llvm.loop_annotation<unroll = #[[ON]]>
// CHECK-LABEL: func.func @loops
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.store
// CHECK: } {llvm.loop_annotation = #[[KEEP]]}
// CHECK: } {llvm.loop_annotation = #[[KEEP]]}
// CHECK: scf.for
// CHECK: vector.load
// CHECK: scf.yield
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK: scf.for
// CHECK: memref.store
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK: scf.for
// CHECK: } {llvm.loop_annotation = #[[FULL]]}
// After the conversions the hint is the back edge's own attribute, which the translation
// to LLVM IR reads; no discardable copy is left.
// LLVM-LABEL: llvm.func @loops
// LLVM: llvm.br ^{{.*}} {loop_annotation = #{{.*}}}
// LLVM-NOT: llvm.loop_annotation =
func.func @loops(%m: memref<4x64xf32>, %s: memref<16xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %z = arith.constant dense<0.0> : vector<16xf32>
  %f = arith.constant 1.0 : f32
  scf.for %r = %c0 to %c4 step %c1 {
    scf.for %i = %c0 to %c64 step %c16 {
      %v = vector.load %m[%r, %i] : memref<4x64xf32>, vector<16xf32>
      %w = arith.mulf %v, %v : vector<16xf32>
      vector.store %w, %m[%r, %i] : memref<4x64xf32>, vector<16xf32>
    }
  }
  %acc = scf.for %i = %c0 to %c64 step %c16 iter_args(%a = %z) -> (vector<16xf32>) {
    %v = vector.load %m[%c0, %i] : memref<4x64xf32>, vector<16xf32>
    %b = arith.addf %a, %v : vector<16xf32>
    scf.yield %b : vector<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    memref.store %f, %s[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c64 step %c16 {
    vector.store %acc, %m[%c0, %i] : memref<4x64xf32>, vector<16xf32>
  } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <full = true>>}
  return %acc : vector<16xf32>
}
