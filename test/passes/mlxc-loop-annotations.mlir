// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-loop-annotations)' | FileCheck %s

// The back edge convert-scf-to-cf annotated: the hint becomes llvm.br's own
// loop_annotation (what the translation to LLVM IR makes llvm.loop metadata from), and
// the discardable copy goes. A branch with neither is left alone.
// CHECK-LABEL: llvm.func @loop
// CHECK: llvm.br ^bb1(%{{.*}} : i64){{$}}
// CHECK: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #{{.*}}}
// CHECK-NOT: llvm.loop_annotation =
llvm.func @loop(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %lt = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %lt, ^bb2, ^bb3
^bb2:
  %next = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%next : i64) {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
^bb3:
  llvm.return
}
