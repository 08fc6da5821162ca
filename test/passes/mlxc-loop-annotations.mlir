// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-loop-annotations)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-loop-annotations)' | FileCheck %s --check-prefix=CF
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-loop-annotations,convert-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM

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

// -----

// On the cf level, where the CPU pipeline runs it (just after convert-scf-to-cf): the
// hint is renamed on the cf.br, and the conversion to the LLVM dialect, which copies
// cf.br's attributes, makes it llvm.br's inherent loop_annotation.
// CF-LABEL: func.func @cf_loop
// CF: cf.br ^bb1(%{{.*}} : index){{$}}
// CF: cf.br ^bb1(%{{.*}} : index) {loop_annotation = #{{.*}}}
// CF-NOT: llvm.loop_annotation =
// LLVM-LABEL: llvm.func @cf_loop
// LLVM: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #{{.*}}}
// LLVM-NOT: llvm.loop_annotation =
func.func @cf_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  cf.br ^bb1(%c0 : index)
^bb1(%i: index):
  %lt = arith.cmpi slt, %i, %n : index
  cf.cond_br %lt, ^bb2, ^bb3
^bb2:
  %next = arith.addi %i, %c1 : index
  cf.br ^bb1(%next : index) {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
^bb3:
  return
}
