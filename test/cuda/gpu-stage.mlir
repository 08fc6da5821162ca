// The cuda target's `gpu` stage: each linalg op becomes a kernel on a 1-D grid of
// up to 256-thread blocks, a whole-array reduction a tree of partial reductions, and
// the host function only allocates and launches.
// RUN: mlxc-opt %s --mlxc-pipeline=cuda --mlxc-stop-after=gpu | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: memref<1000x3xf32>, %[[SUM:.*]]: memref<f32>, %[[ROWS:.*]]: memref<1000xf32>)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch_func @{{.*}}::@main_kernel blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C32]], %[[C1]], %[[C1]]) args(%[[SUM]] : memref<f32>)
// CHECK: %[[P:.*]] = memref.alloc() : memref<50xf32>
// The whole-array sum: 50 partial sums (mlxc-gpu-split-reductions), then their sum.
// CHECK: gpu.launch_func @{{.*}}::@main_kernel blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C64]], %[[C1]], %[[C1]]) args(%[[P]] : memref<50xf32>)
// CHECK: gpu.launch_func @{{.*}}::@main_kernel blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C64]], %[[C1]], %[[C1]]) args(%[[X]] : memref<1000x3xf32>, %[[P]] : memref<50xf32>)
// CHECK: gpu.launch_func @{{.*}}::@main_kernel blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C32]], %[[C1]], %[[C1]]) args(%[[P]] : memref<50xf32>, %[[SUM]] : memref<f32>)
// CHECK: memref.dealloc %[[P]]
// One thread per row sum: 4 blocks of 256.
// CHECK: gpu.launch_func @{{.*}}::@main_kernel blocks in (%[[C4]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]]) args(%[[ROWS]] : memref<1000xf32>)
// CHECK: gpu.launch_func @{{.*}}::@main_kernel blocks in (%[[C4]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]]) args(%[[X]] : memref<1000x3xf32>, %[[ROWS]] : memref<1000xf32>)
// CHECK-NOT: memref.load
// CHECK-NOT: linalg.
// CHECK: return

// A mapped kernel: the linear index block * 256 + thread, guarded by < 1000.
// CHECK: gpu.module
// CHECK: gpu.func @main_kernel({{.*}}) kernel
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.thread_id x
// CHECK: arith.cmpi slt
// CHECK: scf.if

func.func @main(%x: tensor<1000x3xf32>) -> (tensor<f32>, tensor<1000xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %all = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 1]
      : (tensor<1000x3xf32>, tensor<f32>) -> tensor<f32>
  %rows = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]
      : (tensor<1000x3xf32>, tensor<f32>) -> tensor<1000xf32>
  return %all, %rows : tensor<f32>, tensor<1000xf32>
}
