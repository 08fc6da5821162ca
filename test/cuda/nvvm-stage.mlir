// The cuda target's `nvvm` stage: kernels in the LLVM dialect, one bare pointer per
// buffer, NVVM thread/block ids, math as libdevice calls; host code unchanged.
// RUN: mlxc-opt %s --mlxc-pipeline=cuda --mlxc-stop-after=nvvm | FileCheck %s

// CHECK: func.func @main
// CHECK: gpu.launch_func @main_kernel::@main_kernel blocks in (%{{.*}}) threads in (%{{.*}}) args(%{{.*}} : memref<300xf32>, %{{.*}} : memref<300xf32>)
// CHECK: gpu.module @main_kernel
// CHECK: llvm.func @__nv_expf(f32) -> f32
// CHECK: llvm.func @main_kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK-DAG: nvvm.read.ptx.sreg.ctaid.x
// CHECK-DAG: nvvm.read.ptx.sreg.tid.x
// CHECK: llvm.icmp "slt"
// CHECK: llvm.call @__nv_expf
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK: llvm.return

func.func @main(%x: tensor<300xf32>) -> tensor<300xf32> {
  %e = stablehlo.exponential %x : tensor<300xf32>
  return %e : tensor<300xf32>
}
