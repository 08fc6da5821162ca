// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-strided-gathers,canonicalize,cse)' | FileCheck %s

// A gather from a slice of rows (rows of 8, 3 of every 4 kept): its offsets were
// linearized over the dense 2x3x8 shape, so each lane's 24-element block becomes a
// 32-element one: offset / 24 * 32 + offset % 24, from a flat unit-stride view.
// CHECK-LABEL: func.func @rows_cut
// CHECK-DAG: %[[C24:.*]] = arith.constant dense<24> : vector<3xindex>
// CHECK-DAG: %[[C32:.*]] = arith.constant dense<32> : vector<3xindex>
// CHECK-DAG: %[[REM:.*]] = arith.remui %arg1, %[[C24]]
// CHECK-DAG: %[[DIV:.*]] = arith.divui %arg1, %[[C24]]
// CHECK: %[[ROW:.*]] = arith.muli %[[DIV]], %[[C32]]
// CHECK: %[[AT:.*]] = arith.addi %[[REM]], %[[ROW]]
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [56], strides: [1]
// CHECK: vector.gather %[[FLAT]][%{{.*}}] [%[[AT]]]
func.func @rows_cut(%arg0: memref<2x4x8xf32>, %idx: vector<3xindex>) -> vector<3xf32> {
  %c0 = arith.constant 0 : index
  %mask = arith.constant dense<true> : vector<3xi1>
  %pass = arith.constant dense<0.0> : vector<3xf32>
  %view = memref.subview %arg0[0, 0, 0] [2, 3, 8] [1, 1, 1] : memref<2x4x8xf32> to memref<2x3x8xf32, strided<[32, 8, 1]>>
  %g = vector.gather %view[%c0, %c0, %c0] [%idx], %mask, %pass : memref<2x3x8xf32, strided<[32, 8, 1]>>, vector<3xindex>, vector<3xi1>, vector<3xf32> into vector<3xf32>
  return %g : vector<3xf32>
}

// Every other column, from a dynamic offset and a nonzero start: the start joins the
// row-major position; the rows (stride 8) follow one another at this stride 2, so the
// position is only doubled.
// CHECK-LABEL: func.func @strided_columns
// CHECK-DAG: %[[C4:.*]] = arith.constant dense<4> : vector<2x2xindex>
// CHECK-DAG: %[[C2:.*]] = arith.constant dense<2> : vector<2x2xindex>
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata
// CHECK: %[[OFF:.*]] = arith.index_cast %{{.*}} : vector<2x2xi32> to vector<2x2xindex>
// CHECK: %[[ROW:.*]] = vector.broadcast %arg2
// CHECK: %[[START:.*]] = arith.muli %[[ROW]], %[[C4]]
// CHECK: %[[POS:.*]] = arith.addi %[[OFF]], %[[START]]
// CHECK-NOT: arith.divui
// CHECK: %[[AT:.*]] = arith.muli %[[POS]], %[[C2]]
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%[[OFFSET]]], sizes: [23], strides: [1]
// CHECK: vector.gather %[[FLAT]][%c0] [%[[AT]]]{{.*}} : memref<23xf32, strided<[1], offset: ?>>, vector<2x2xindex>
func.func @strided_columns(%arg0: memref<4x8xf32>, %i: index, %row: index, %idx: vector<2x2xi32>) -> vector<2x2xf32> {
  %c0 = arith.constant 0 : index
  %mask = arith.constant dense<true> : vector<2x2xi1>
  %pass = arith.constant dense<0.0> : vector<2x2xf32>
  %view = memref.subview %arg0[%i, 0] [3, 4] [1, 2] : memref<4x8xf32> to memref<3x4xf32, strided<[8, 2], offset: ?>>
  %g = vector.gather %view[%row, %c0] [%idx], %mask, %pass : memref<3x4xf32, strided<[8, 2], offset: ?>>, vector<2x2xi32>, vector<2x2xi1>, vector<2x2xf32> into vector<2x2xf32>
  return %g : vector<2x2xf32>
}

// A row stride known only at run time: read from the view's metadata, and the flat
// view's size computed from it.
// CHECK-LABEL: func.func @dynamic_stride
// CHECK-DAG: %[[C4:.*]] = arith.constant dense<4> : vector<4xindex>
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[STRIDE:.*]] = vector.broadcast %[[STRIDES]]#0 : index to vector<4xindex>
// CHECK: %[[DIV:.*]] = arith.divui %arg1, %[[C4]]
// CHECK: arith.muli %[[DIV]], %[[STRIDE]]
// CHECK: %[[LAST:.*]] = arith.addi %{{.*}} : index
// CHECK: memref.reinterpret_cast %arg0 to offset: [%[[OFFSET]]], sizes: [%[[LAST]]], strides: [1]
// CHECK: vector.gather {{.*}} : memref<?xf32, strided<[1], offset: ?>>
func.func @dynamic_stride(%arg0: memref<3x4xf32, strided<[?, 1], offset: ?>>, %idx: vector<4xindex>) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %mask = arith.constant dense<true> : vector<4xi1>
  %pass = arith.constant dense<0.0> : vector<4xf32>
  %g = vector.gather %arg0[%c0, %c0] [%idx], %mask, %pass : memref<3x4xf32, strided<[?, 1], offset: ?>>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  return %g : vector<4xf32>
}

// Dense buffers, and views whose cut dimension has size 1, are left alone.
// CHECK-LABEL: func.func @dense
// CHECK-NOT: reinterpret_cast
// CHECK: vector.gather %arg0[%c0, %c0] [%arg1]
// CHECK: vector.gather %{{.*}}[%c0, %c0] [%arg1]
func.func @dense(%arg0: memref<4x8xf32>, %idx: vector<3xindex>) -> (vector<3xf32>, vector<3xf32>) {
  %c0 = arith.constant 0 : index
  %mask = arith.constant dense<true> : vector<3xi1>
  %pass = arith.constant dense<0.0> : vector<3xf32>
  %g = vector.gather %arg0[%c0, %c0] [%idx], %mask, %pass : memref<4x8xf32>, vector<3xindex>, vector<3xi1>, vector<3xf32> into vector<3xf32>
  %view = memref.subview %arg0[2, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: 16>>
  %h = vector.gather %view[%c0, %c0] [%idx], %mask, %pass : memref<1x8xf32, strided<[8, 1], offset: 16>>, vector<3xindex>, vector<3xi1>, vector<3xf32> into vector<3xf32>
  return %g, %h : vector<3xf32>, vector<3xf32>
}
