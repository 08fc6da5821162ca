// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// RFFT: the real input becomes complex<f64>, one dot with an 8x5 twiddle matrix
// (angles from the exact k*n mod 8) keeps the 5 non-redundant entries, and the
// result is rounded once to complex<f32>.
// CHECK-LABEL: func.func @rfft
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NOT: stablehlo.fft
// CHECK: %[[X64:.*]] = stablehlo.convert %[[X]] : (tensor<2x8xf32>) -> tensor<2x8xf64>
// CHECK: %[[C:.*]] = stablehlo.complex %[[X64]], %{{.*}} : tensor<2x8xcomplex<f64>>
// CHECK: %[[KN:.*]] = stablehlo.multiply %{{.*}}, %{{.*}} : tensor<8x5xi64>
// CHECK: stablehlo.remainder %[[KN]], %{{.*}} : tensor<8x5xi64>
// CHECK: stablehlo.constant dense<-0.78539816339744828> : tensor<8x5xf64>
// CHECK: stablehlo.cosine
// CHECK: stablehlo.sine
// CHECK: %[[W:.*]] = stablehlo.complex {{.*}} : tensor<8x5xcomplex<f64>>
// CHECK: %[[Y:.*]] = stablehlo.dot_general %[[C]], %[[W]], contracting_dims = [1] x [0]{{.*}} -> tensor<2x5xcomplex<f64>>
// CHECK: %[[R:.*]] = stablehlo.convert %[[Y]] : (tensor<2x5xcomplex<f64>>) -> tensor<2x5xcomplex<f32>>
// CHECK: return %[[R]]
func.func @rfft(%x: tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [8] : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
  return %0 : tensor<2x5xcomplex<f32>>
}

// -----

// IRFFT over two dims: an inverse transform of the outer dim (scaled by 1/4, then
// transposed back into place), then the Hermitian half of the inner dim, whose rows
// k = 1 count twice, and the real part.
// CHECK-LABEL: func.func @irfft
// CHECK-SAME: (%[[X:.*]]: tensor<3x4x3xcomplex<f64>>)
// CHECK: stablehlo.constant dense<1.5707963267948966> : tensor<4x4xf64>
// CHECK: stablehlo.constant dense<2.500000e-01> : tensor<4x4xf64>
// CHECK: %[[A:.*]] = stablehlo.dot_general %[[X]], %{{.*}}, contracting_dims = [1] x [0]{{.*}} -> tensor<3x3x4xcomplex<f64>>
// CHECK: %[[T:.*]] = stablehlo.transpose %[[A]], dims = [0, 2, 1]
// CHECK: stablehlo.constant dense<[2.500000e-01, 5.000000e-01, 2.500000e-01]> : tensor<3xf64>
// CHECK: %[[B:.*]] = stablehlo.dot_general %[[T]], %{{.*}}, contracting_dims = [2] x [0]{{.*}} -> tensor<3x4x4xcomplex<f64>>
// CHECK: %[[R:.*]] = stablehlo.real %[[B]] : (tensor<3x4x4xcomplex<f64>>) -> tensor<3x4x4xf64>
// CHECK: return %[[R]]
func.func @irfft(%x: tensor<3x4x3xcomplex<f64>>) -> tensor<3x4x4xf64> {
  %0 = stablehlo.fft %x, type = IRFFT, length = [4, 4] : (tensor<3x4x3xcomplex<f64>>) -> tensor<3x4x4xf64>
  return %0 : tensor<3x4x4xf64>
}

// -----

// A short complex transform is XLA's own FFT (ducc0) written out as scalar-style ops
// on the batch: each of the 4 entries becomes a lane (a slice of the real and
// imaginary parts), the radix-4 butterfly adds and subtracts lanes (the rotation by
// i is a negation), the inverse's 1/4 multiplies each result once, and the lanes are
// stacked back. No dot and no f64 anywhere.
// CHECK-LABEL: func.func @ifft4
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xcomplex<f32>>)
// CHECK-NOT: dot_general
// CHECK-NOT: f64
// CHECK: %[[RE:.*]] = stablehlo.real %[[X]] : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xf32>
// CHECK: %[[S0:.*]] = stablehlo.slice %[[RE]] [0:2, 0:1]
// CHECK: %[[R0:.*]] = stablehlo.reshape %[[S0]] : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK: %[[S2:.*]] = stablehlo.slice %[[RE]] [0:2, 2:3]
// CHECK: %[[R2:.*]] = stablehlo.reshape %[[S2]] : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK: %[[IM:.*]] = stablehlo.imag %[[X]]
// CHECK: %[[T2:.*]] = stablehlo.add %[[R0]], %[[R2]] : tensor<2xf32>
// CHECK: %[[T1:.*]] = stablehlo.subtract %[[R0]], %[[R2]] : tensor<2xf32>
// CHECK: stablehlo.negate
// CHECK: %[[Y0:.*]] = stablehlo.add %[[T2]], %{{.*}} : tensor<2xf32>
// CHECK: %[[Q:.*]] = stablehlo.constant dense<2.500000e-01> : tensor<2xf32>
// CHECK: %[[Z0:.*]] = stablehlo.multiply %[[Y0]], %[[Q]] : tensor<2xf32>
// CHECK: %[[C0:.*]] = stablehlo.reshape %[[Z0]] : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK: %[[REAL:.*]] = stablehlo.concatenate %[[C0]], %{{.*}}, %{{.*}}, %{{.*}}, dim = 1 : {{.*}} -> tensor<2x4xf32>
// CHECK: %[[IMAG:.*]] = stablehlo.concatenate %{{.*}}, dim = 1 : {{.*}} -> tensor<2x4xf32>
// CHECK: %[[R:.*]] = stablehlo.complex %[[REAL]], %[[IMAG]] : tensor<2x4xcomplex<f32>>
// CHECK: return %[[R]]
func.func @ifft4(%x: tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = IFFT, length = [4] : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
  return %0 : tensor<2x4xcomplex<f32>>
}

// -----

// Two axes: the inner one (length 3, a radix-3 pass with ducc0's constants) first,
// then the outer one (length 2); the forward transform has no scale.
// CHECK-LABEL: func.func @fft2d
// CHECK-NOT: dot_general
// CHECK: stablehlo.slice %{{.*}} [0:2, 0:2, 0:1] : (tensor<2x2x3xf32>) -> tensor<2x2x1xf32>
// CHECK: stablehlo.constant dense<-5.000000e-01> : tensor<2x2xf32>
// CHECK: stablehlo.constant dense<-0.866025388> : tensor<2x2xf32>
// CHECK: stablehlo.concatenate {{.*}} dim = 2 : {{.*}} -> tensor<2x2x3xf32>
// CHECK: stablehlo.slice %{{.*}} [0:2, 0:1, 0:3] : (tensor<2x2x3xf32>) -> tensor<2x1x3xf32>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT: stablehlo.multiply
// CHECK: stablehlo.concatenate {{.*}} dim = 1 : {{.*}} -> tensor<2x2x3xf32>
// CHECK: return
func.func @fft2d(%x: tensor<2x2x3xcomplex<f32>>) -> tensor<2x2x3xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [2, 3] : (tensor<2x2x3xcomplex<f32>>) -> tensor<2x2x3xcomplex<f32>>
  return %0 : tensor<2x2x3xcomplex<f32>>
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
