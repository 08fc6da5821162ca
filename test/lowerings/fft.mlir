// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// A short transform is XLA's own FFT (ducc0) written out as scalar-style ops on the
// batch: the transformed axis is moved to the front, each of its entries becomes a
// lane (a contiguous slice, with a leading unit dim), the radix-4 butterfly adds and subtracts lanes (the
// rotation by i is a negation), the inverse's 1/4 multiplies each result once, and the
// lanes are stacked back and moved into place. No dot and no f64 anywhere.
// CHECK-LABEL: func.func @ifft4
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xcomplex<f32>>)
// CHECK-NOT: dot_general
// CHECK-NOT: f64
// CHECK: %[[RE:.*]] = stablehlo.real %[[X]] : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xf32>
// CHECK: %[[T:.*]] = stablehlo.transpose %[[RE]], dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
// CHECK: %[[R0:.*]] = stablehlo.slice %[[T]] [0:1, 0:2] : (tensor<4x2xf32>) -> tensor<1x2xf32>
// CHECK: %[[R2:.*]] = stablehlo.slice %[[T]] [2:3, 0:2]
// CHECK: %[[IM:.*]] = stablehlo.imag %[[X]]
// CHECK: %[[T2:.*]] = stablehlo.add %[[R0]], %[[R2]] : tensor<1x2xf32>
// CHECK: %[[T1:.*]] = stablehlo.subtract %[[R0]], %[[R2]] : tensor<1x2xf32>
// CHECK: stablehlo.negate
// CHECK: %[[Y0:.*]] = stablehlo.add %[[T2]], %{{.*}} : tensor<1x2xf32>
// CHECK: %[[Q:.*]] = stablehlo.constant dense<2.500000e-01> : tensor<1x2xf32>
// CHECK: %[[Z0:.*]] = stablehlo.multiply %[[Y0]], %[[Q]] : tensor<1x2xf32>
// CHECK: %[[CAT:.*]] = stablehlo.concatenate %[[Z0]], %{{.*}}, %{{.*}}, %{{.*}}, dim = 0 : {{.*}} -> tensor<4x2xf32>
// CHECK: %[[REAL:.*]] = stablehlo.transpose %[[CAT]], dims = [1, 0] : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CHECK: %[[IMAG:.*]] = stablehlo.transpose %{{.*}}, dims = [1, 0] : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CHECK: %[[R:.*]] = stablehlo.complex %[[REAL]], %[[IMAG]] : tensor<2x4xcomplex<f32>>
// CHECK: return %[[R]]
func.func @ifft4(%x: tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = IFFT, length = [4] : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
  return %0 : tensor<2x4xcomplex<f32>>
}

// -----

// Two axes: the inner one (length 3, a radix-3 pass with ducc0's constants) first,
// then the outer one (length 2); the forward transform has no scale. Lanes are the
// batch flattened (2x2 -> 4).
// CHECK-LABEL: func.func @fft2d
// CHECK-NOT: dot_general
// CHECK: stablehlo.transpose %{{.*}}, dims = [2, 0, 1] : (tensor<2x2x3xf32>) -> tensor<3x2x2xf32>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<3x2x2xf32>) -> tensor<3x4xf32>
// CHECK: stablehlo.constant dense<-5.000000e-01> : tensor<1x4xf32>
// CHECK: stablehlo.constant dense<-0.866025388> : tensor<1x4xf32>
// CHECK: stablehlo.concatenate {{.*}} dim = 0 : {{.*}} -> tensor<3x4xf32>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<3x4xf32>) -> tensor<3x2x2xf32>
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 2, 0] : (tensor<3x2x2xf32>) -> tensor<2x2x3xf32>
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0, 2] : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
// CHECK-NOT: stablehlo.multiply
// CHECK: stablehlo.concatenate {{.*}} dim = 0 : {{.*}} -> tensor<2x6xf32>
// CHECK: return
func.func @fft2d(%x: tensor<2x2x3xcomplex<f32>>) -> tensor<2x2x3xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [2, 3] : (tensor<2x2x3xcomplex<f32>>) -> tensor<2x2x3xcomplex<f32>>
  return %0 : tensor<2x2x3xcomplex<f32>>
}

// -----

// RFFT: ducc0's real radix-8 plan (passes 4 and 2 and the 1/sqrt(2) of the eighth
// roots) on the 8 real lanes; the 5 non-redundant entries are stacked, with the
// imaginary parts of X[0] and X[4] the constant 0 ducc0 stores there.
// CHECK-LABEL: func.func @rfft
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NOT: dot_general
// CHECK: stablehlo.transpose %[[X]], dims = [1, 0] : (tensor<2x8xf32>) -> tensor<8x2xf32>
// CHECK: stablehlo.constant dense<0.707106769> : tensor<1x2xf32>
// CHECK: %[[RE:.*]] = stablehlo.concatenate {{.*}} dim = 0 : {{.*}} -> tensor<5x2xf32>
// CHECK: %[[RET:.*]] = stablehlo.transpose %[[RE]], dims = [1, 0] : (tensor<5x2xf32>) -> tensor<2x5xf32>
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<1x2xf32>
// CHECK: %[[IM:.*]] = stablehlo.concatenate %[[Z]], {{.*}}, %[[Z]], dim = 0 : {{.*}} -> tensor<5x2xf32>
// CHECK: %[[IMT:.*]] = stablehlo.transpose %[[IM]], dims = [1, 0] : (tensor<5x2xf32>) -> tensor<2x5xf32>
// CHECK: %[[R:.*]] = stablehlo.complex %[[RET]], %[[IMT]] : tensor<2x5xcomplex<f32>>
// CHECK: return %[[R]]
func.func @rfft(%x: tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [8] : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
  return %0 : tensor<2x5xcomplex<f32>>
}

// -----

// IRFFT over two dims, as XLA orders it: the complex inverse of the outer dim
// (unscaled), then the real inverse of the inner one, which takes the whole 1/16.
// CHECK-LABEL: func.func @irfft
// CHECK-SAME: (%[[X:.*]]: tensor<3x4x3xcomplex<f64>>)
// CHECK-NOT: dot_general
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0, 2] : (tensor<3x4x3xf64>) -> tensor<4x3x3xf64>
// CHECK-NOT: stablehlo.multiply
// CHECK: %[[C:.*]] = stablehlo.complex %{{.*}}, %{{.*}} : tensor<3x4x3xcomplex<f64>>
// CHECK: stablehlo.real %[[C]]
// CHECK: stablehlo.transpose %{{.*}}, dims = [2, 0, 1] : (tensor<3x4x3xf64>) -> tensor<3x3x4xf64>
// CHECK: stablehlo.constant dense<2.000000e+00> : tensor<1x12xf64>
// CHECK: %[[S:.*]] = stablehlo.constant dense<6.250000e-02> : tensor<1x12xf64>
// CHECK: stablehlo.multiply %{{.*}}, %[[S]] : tensor<1x12xf64>
// CHECK: %[[CAT:.*]] = stablehlo.concatenate {{.*}} dim = 0 : {{.*}} -> tensor<4x12xf64>
// CHECK: %[[B:.*]] = stablehlo.reshape %[[CAT]] : (tensor<4x12xf64>) -> tensor<4x3x4xf64>
// CHECK: %[[R:.*]] = stablehlo.transpose %[[B]], dims = [1, 2, 0] : (tensor<4x3x4xf64>) -> tensor<3x4x4xf64>
// CHECK: return %[[R]]
func.func @irfft(%x: tensor<3x4x3xcomplex<f64>>) -> tensor<3x4x4xf64> {
  %0 = stablehlo.fft %x, type = IRFFT, length = [4, 4] : (tensor<3x4x3xcomplex<f64>>) -> tensor<3x4x4xf64>
  return %0 : tensor<3x4x4xf64>
}

// -----

// Lanes are rows of 16: a batch of 21 is flattened, padded to 2 x 16 for the
// transform and sliced back to 21 after it.
// CHECK-LABEL: func.func @rows
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2x3x7xf32>) -> tensor<2x21xf32>
// CHECK: stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 0], high = [0, 11], interior = [0, 0] : (tensor<2x21xf32>, tensor<f32>) -> tensor<2x32xf32>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2x32xf32>) -> tensor<2x2x16xf32>
// CHECK: stablehlo.slice %{{.*}} [0:1, 0:2, 0:16] : (tensor<2x2x16xf32>) -> tensor<1x2x16xf32>
// CHECK: stablehlo.add %{{.*}}, %{{.*}} : tensor<1x2x16xf32>
// CHECK: stablehlo.subtract %{{.*}}, %{{.*}} : tensor<1x2x16xf32>
// CHECK: stablehlo.concatenate {{.*}} dim = 0 : {{.*}} -> tensor<2x2x16xf32>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2x2x16xf32>) -> tensor<2x32xf32>
// CHECK: stablehlo.slice %{{.*}} [0:2, 0:21] : (tensor<2x32xf32>) -> tensor<2x21xf32>
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 2, 0] : (tensor<2x3x7xf32>) -> tensor<3x7x2xf32>
func.func @rows(%x: tensor<3x7x2xf32>) -> tensor<3x7x2xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [2] : (tensor<3x7x2xf32>) -> tensor<3x7x2xcomplex<f32>>
  return %0 : tensor<3x7x2xcomplex<f32>>
}

// -----

// FFT [64] would unroll into 1254 arithmetic ops, over the exact path's budget: it keeps the
// f64 path, one dot with a 64x64 twiddle matrix.
// CHECK-LABEL: func.func @over_budget
// CHECK: stablehlo.convert %{{.*}} : (tensor<2x64xcomplex<f32>>) -> tensor<2x64xcomplex<f64>>
// CHECK: stablehlo.dot_general {{.*}} -> tensor<2x64xcomplex<f64>>
// CHECK: stablehlo.convert %{{.*}} : (tensor<2x64xcomplex<f64>>) -> tensor<2x64xcomplex<f32>>
func.func @over_budget(%x: tensor<2x64xcomplex<f32>>) -> tensor<2x64xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [64] : (tensor<2x64xcomplex<f32>>) -> tensor<2x64xcomplex<f32>>
  return %0 : tensor<2x64xcomplex<f32>>
}

// -----

// A long composite length splits: 128 = 8 x 16, the x viewed as [8, 16], a DFT of
// length 8 over the rows, twiddles w_128^(row * col), a DFT of length 16 over the
// columns, and the result read column-major.
// CHECK-LABEL: func.func @split
// CHECK: %[[V:.*]] = stablehlo.reshape %{{.*}} : (tensor<2x128xcomplex<f64>>) -> tensor<2x8x16xcomplex<f64>>
// CHECK: stablehlo.dot_general %[[V]], %{{.*}}, contracting_dims = [1] x [0]{{.*}} -> tensor<2x16x8xcomplex<f64>>
// CHECK: stablehlo.constant dense<128> : tensor<8x16xi64>
// CHECK: stablehlo.constant dense<-0.049087385212340517> : tensor<8x16xf64>
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [2] x [0]{{.*}} -> tensor<2x8x16xcomplex<f64>>
// CHECK: stablehlo.transpose %{{.*}}, dims = [0, 2, 1] : (tensor<2x8x16xcomplex<f64>>) -> tensor<2x16x8xcomplex<f64>>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2x16x8xcomplex<f64>>) -> tensor<2x128xcomplex<f64>>
func.func @split(%x: tensor<2x128xcomplex<f32>>) -> tensor<2x128xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [128] : (tensor<2x128xcomplex<f32>>) -> tensor<2x128xcomplex<f32>>
  return %0 : tensor<2x128xcomplex<f32>>
}

// -----

// A long prime length (521) is a chirp product, a zero pad to 2048 >= 2 * 521 - 1,
// power-of-two transforms and a product with the transformed chirp.
// CHECK-LABEL: func.func @prime
// CHECK: stablehlo.constant dense<1042> : tensor<521xi64>
// CHECK: %[[A:.*]] = stablehlo.multiply %{{.*}}, %{{.*}} : tensor<2x521xcomplex<f64>>
// CHECK: stablehlo.pad %[[A]], %{{.*}}, low = [0, 0], high = [0, 1527], interior = [0, 0]
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2x2048xcomplex<f64>>) -> tensor<2x32x64xcomplex<f64>>
// CHECK: stablehlo.minimum
// CHECK: stablehlo.slice %{{.*}} [0:2, 0:521]
// CHECK: return
func.func @prime(%x: tensor<2x521xcomplex<f64>>) -> tensor<2x521xcomplex<f64>> {
  %0 = stablehlo.fft %x, type = FFT, length = [521] : (tensor<2x521xcomplex<f64>>) -> tensor<2x521xcomplex<f64>>
  return %0 : tensor<2x521xcomplex<f64>>
}
