// The contract that ends the cuda `gpu` stage: host code only allocates device
// buffers and launches kernels; anything else left there is named with its place.
// RUN: not mlxc-opt %s --mlxc-pipeline=cuda --mlxc-stop-after=gpu 2>&1 | FileCheck %s

// CHECK: host-contract.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: after stage 'gpu': 'memref.alloca' is left in host code; the host may only allocate buffers and launch kernels
module attributes {mlxc.entry = "main", mlxc.stage = "bufferize"} {
  func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %scratch = memref.alloca() : memref<4xf32>
    memref.copy %scratch, %y : memref<4xf32> to memref<4xf32>
    return
  }
}
