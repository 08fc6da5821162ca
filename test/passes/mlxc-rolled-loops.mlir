// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-rolled-loops)' | FileCheck %s
// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-rolled-loops,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts,mlxc-loop-annotations)' | FileCheck %s --check-prefix=LLVM

// A loop without loop-carried values is kept rolled; a reduction loop (iter_args) is left
// to LLVM's unroller, and a loop that already has a hint keeps it.
// CHECK-DAG: #[[OFF:.*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG: #[[ON:.*]] = #llvm.loop_unroll<full = true>
// CHECK-DAG: #[[KEEP:.*]] = #llvm.loop_annotation<unroll = #[[OFF]]>
// CHECK-DAG: #[[FULL:.*]] = #llvm.loop_annotation<unroll = #[[ON]]>
// CHECK-LABEL: func.func @loops
// CHECK: scf.for
// CHECK: } {llvm.loop_annotation = #[[KEEP]]}
// CHECK: scf.for
// CHECK: scf.yield
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK: } {llvm.loop_annotation = #[[FULL]]}
// After the conversions the hint is the back edge's own attribute, which the translation
// to LLVM IR reads; no discardable copy is left.
// LLVM-LABEL: llvm.func @loops
// LLVM: llvm.br ^{{.*}} {loop_annotation = #{{.*}}}
// LLVM-NOT: llvm.loop_annotation =
func.func @loops(%m: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %m[%i] : memref<16xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %m[%i] : memref<16xf32>
  }
  %s = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %z) -> (f32) {
    %v = memref.load %m[%i] : memref<16xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  scf.for %i = %c0 to %c16 step %c1 {
    memref.store %s, %m[%i] : memref<16xf32>
  } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <full = true>>}
  return %s : f32
}
