// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-small-float-moves)' | FileCheck %s

// A vector<9xbf16> load, element moves through an array of vectors, and a store: all
// on i16 lanes; the value an fpext reads is cast back once. An f32 load stays.
// CHECK-LABEL: llvm.func @moves
// CHECK: %[[L:.*]] = llvm.load %arg0 {alignment = 2 : i64} : !llvm.ptr -> vector<9xi16>
// CHECK-NEXT: %[[B:.*]] = llvm.bitcast %[[L]] : vector<9xi16> to vector<9xbf16>
// CHECK: llvm.extractelement %[[L]]{{.*}} : vector<9xi16>
// CHECK: llvm.insertvalue {{.*}} : !llvm.array<2 x vector<1xi16>>
// CHECK: %[[E:.*]] = llvm.extractvalue {{.*}} : !llvm.array<2 x vector<1xi16>>
// CHECK: llvm.store %[[E]], %arg1 : vector<1xi16>, !llvm.ptr
// CHECK: llvm.fpext %[[B]] : vector<9xbf16> to vector<9xf32>
// CHECK: llvm.load %arg1 : !llvm.ptr -> f32
llvm.func @moves(%p: !llvm.ptr, %q: !llvm.ptr) -> vector<9xf32> {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %v = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<9xbf16>
  %e = llvm.extractelement %v[%c0 : i64] : vector<9xbf16>
  %u = llvm.mlir.poison : vector<1xbf16>
  %w = llvm.insertelement %e, %u[%c0 : i64] : vector<1xbf16>
  %a0 = llvm.mlir.poison : !llvm.array<2 x vector<1xbf16>>
  %a1 = llvm.insertvalue %w, %a0[0] : !llvm.array<2 x vector<1xbf16>>
  %x = llvm.extractvalue %a1[0] : !llvm.array<2 x vector<1xbf16>>
  llvm.store %x, %q : vector<1xbf16>, !llvm.ptr
  %f = llvm.fpext %v : vector<9xbf16> to vector<9xf32>
  %g = llvm.load %q : !llvm.ptr -> f32
  llvm.return %f : vector<9xf32>
}
