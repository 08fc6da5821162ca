// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-library-ffts)' | FileCheck %s

// A complex FFT over the last axis: the operand goes to the runtime's kernel as a
// read-only buffer and the result is a fresh one; sizes are the batch and the
// lengths (padded with 1s), flags the rank, the kind (0: FFT) and the threads.
// CHECK-LABEL: func.func @fft_c64
// CHECK: %[[IN:.*]] = bufferization.to_buffer %arg0 read_only : tensor<4x16xcomplex<f32>> to memref<4x16xcomplex<f32>>
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16xcomplex<f32>>
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[RANK:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[KIND:.*]] = arith.constant 0 : i32
// CHECK: %[[VIN:.*]] = memref.reinterpret_cast %[[IN]] to offset: [0], sizes: [], strides: [] : memref<4x16xcomplex<f32>> to memref<complex<f32>>
// CHECK: %[[VOUT:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [], strides: [] : memref<4x16xcomplex<f32>> to memref<complex<f32>>
// CHECK: call @mlxc_fft_c64(%[[VIN]], %[[VOUT]], %[[C4]], %[[C16]], %[[C1]], %[[C1]], %[[RANK]], %[[KIND]], %{{.*}})
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// CHECK-NOT: stablehlo.fft
// CHECK: func.func private @mlxc_fft_c64(memref<complex<f32>>, memref<complex<f32>>, index, index, index, index, i32, i32, i32)
func.func @fft_c64(%x: tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [16] : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>>
  return %0 : tensor<4x16xcomplex<f32>>
}

// -----

// IRFFT over two axes in f64: complex in, real out, so its own entry point; kind 3,
// rank 2, lengths 6 and 10 (the operand's last axis holds 10/2 + 1 values).
// CHECK-LABEL: func.func @irfft2_f64
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<3x6x10xf64>
// CHECK-DAG: arith.constant 3 : index
// CHECK-DAG: arith.constant 6 : index
// CHECK-DAG: arith.constant 10 : index
// CHECK-DAG: arith.constant 2 : i32
// CHECK-DAG: arith.constant 3 : i32
// CHECK: call @mlxc_irfft_f64(
// CHECK-NOT: stablehlo.fft
// CHECK: func.func private @mlxc_irfft_f64(memref<complex<f64>>, memref<f64>, index, index, index, index, i32, i32, i32)
func.func @irfft2_f64(%x: tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x10xf64> {
  %0 = stablehlo.fft %x, type = IRFFT, length = [6, 10] : (tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x10xf64>
  return %0 : tensor<3x6x10xf64>
}

// -----

// Lengths the kernel does not cover stay for mlxc-lower-extra-ops: a complex length
// with the prime 127 (a Bluestein pass in XLA's library), a complex length over 300
// that is a multiple of 4 (another plan there), and a real even length over 1000 with
// a factor above 5 (a complex plan of half the length there).
// CHECK-LABEL: func.func @uncovered
// CHECK: stablehlo.fft %arg0, type = FFT, length = [127]
// CHECK: stablehlo.fft %arg1, type = IFFT, length = [1000]
// CHECK: stablehlo.fft %arg2, type = RFFT, length = [2002]
// CHECK-NOT: call @
func.func @uncovered(%a: tensor<2x127xcomplex<f32>>, %b: tensor<1000xcomplex<f64>>, %c: tensor<2002xf32>)
    -> (tensor<2x127xcomplex<f32>>, tensor<1000xcomplex<f64>>, tensor<1002xcomplex<f32>>) {
  %0 = stablehlo.fft %a, type = FFT, length = [127] : (tensor<2x127xcomplex<f32>>) -> tensor<2x127xcomplex<f32>>
  %1 = stablehlo.fft %b, type = IFFT, length = [1000] : (tensor<1000xcomplex<f64>>) -> tensor<1000xcomplex<f64>>
  %2 = stablehlo.fft %c, type = RFFT, length = [2002] : (tensor<2002xf32>) -> tensor<1002xcomplex<f32>>
  return %0, %1, %2 : tensor<2x127xcomplex<f32>>, tensor<1000xcomplex<f64>>, tensor<1002xcomplex<f32>>
}

// -----

// A real length of 127 is the kernel's (ducc0's generic real pass), and an empty batch
// needs no call: the result is a fresh, empty buffer.
// CHECK-LABEL: func.func @rfft_127_and_empty
// CHECK: call @mlxc_rfft_f32(
// CHECK-NOT: call @
// CHECK: bufferization.to_tensor
// CHECK-NOT: stablehlo.fft
func.func @rfft_127_and_empty(%a: tensor<127xf32>, %b: tensor<0x8xf32>)
    -> (tensor<64xcomplex<f32>>, tensor<0x5xcomplex<f32>>) {
  %0 = stablehlo.fft %a, type = RFFT, length = [127] : (tensor<127xf32>) -> tensor<64xcomplex<f32>>
  %1 = stablehlo.fft %b, type = RFFT, length = [8] : (tensor<0x8xf32>) -> tensor<0x5xcomplex<f32>>
  return %0, %1 : tensor<64xcomplex<f32>>, tensor<0x5xcomplex<f32>>
}
