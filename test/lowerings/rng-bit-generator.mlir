// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-lower-extra-ops)' | FileCheck %s

// PHILOX with a three-word state [key, counter low, counter high]: 128-bit counters
// with carry, ten Philox rounds (multipliers 0xD2511F53 = 3528531795 and 0xCD9E8D57 =
// 3449720151, key steps 0x9E3779B9 = 2654435769 and 0xBB67AE85 = 3144134277), the
// four words of each block interleaved, and the counter advanced by the block count.
// CHECK-LABEL: func.func @philox3
// CHECK-SAME: (%[[S:.*]]: tensor<3xui64>)
// CHECK-NOT: rng_bit_generator
// CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 0 : tensor<2xui64>
// CHECK: %[[LO:.*]] = stablehlo.add %{{.*}}, %[[IOTA]] : tensor<2xui64>
// CHECK: stablehlo.compare LT, %[[LO]], %{{.*}}, UNSIGNED
// CHECK-COUNT-10: stablehlo.constant dense<3528531795> : tensor<2xui64>
// CHECK: stablehlo.constant dense<3144134277> : tensor<2xui32>
// CHECK: stablehlo.concatenate {{.*}} dim = 1 : ({{.*}}) -> tensor<2x4xui32>
// CHECK: %[[BITS:.*]] = stablehlo.slice %{{.*}} [0:5] : (tensor<8xui32>) -> tensor<5xui32>
// CHECK: stablehlo.constant dense<2> : tensor<ui64>
// CHECK: %[[STATE:.*]] = stablehlo.concatenate {{.*}} dim = 0 : {{.*}} -> tensor<3xui64>
// CHECK: return %[[STATE]], %{{.*}} : tensor<3xui64>, tensor<5xui32>
func.func @philox3(%s: tensor<3xui64>) -> (tensor<3xui64>, tensor<5xui32>) {
  %0, %1 = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<5xui32>)
  return %0, %1 : tensor<3xui64>, tensor<5xui32>
}

// -----

// DEFAULT is PHILOX (as on XLA's CPU); a two-word state keeps two words, and 64-bit
// outputs pair 32-bit words, low word first.
// CHECK-LABEL: func.func @default64
// CHECK-NOT: rng_bit_generator
// CHECK: stablehlo.shift_left
// CHECK: stablehlo.or
// CHECK: stablehlo.concatenate {{.*}} dim = 1 : ({{.*}}) -> tensor<2x2xui64>
// CHECK: stablehlo.bitcast_convert {{.*}} : (tensor<3xui64>) -> tensor<3xi64>
// CHECK: %[[STATE:.*]] = stablehlo.concatenate {{.*}} -> tensor<2xui64>
// CHECK: return %[[STATE]]
func.func @default64(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<3xi64>) {
  %0, %1 = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xi64>)
  return %0, %1 : tensor<2xui64>, tensor<3xi64>
}

// -----

// THREE_FRY is left to stablehlo-legalize-to-linalg, which matches XLA bit for bit.
// CHECK-LABEL: func.func @threefry
// CHECK: stablehlo.rng_bit_generator %{{.*}}, algorithm = THREE_FRY
func.func @threefry(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>) {
  %0, %1 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  return %0, %1 : tensor<2xui64>, tensor<4xui32>
}

// -----

// rng NORMAL: two ThreeFry streams of 23-bit uniforms, then Box-Muller, then mu + z * sigma.
// CHECK-LABEL: func.func @normal
// CHECK-SAME: (%[[MU:.*]]: tensor<f32>, %[[SIGMA:.*]]: tensor<f32>)
// CHECK-NOT: stablehlo.rng %
// CHECK: stablehlo.rng_bit_generator {{.*}} algorithm = THREE_FRY {{.*}} -> (tensor<2xui64>, tensor<2x3xui32>)
// CHECK: stablehlo.constant dense<9> : tensor<2x3xui32>
// CHECK: stablehlo.shift_right_logical
// CHECK: stablehlo.rng_bit_generator
// CHECK: stablehlo.log
// CHECK: stablehlo.sqrt
// CHECK: stablehlo.cosine
// CHECK: %[[Z:.*]] = stablehlo.multiply
// CHECK: %[[ZS:.*]] = stablehlo.multiply %[[Z]], %{{.*}} : tensor<2x3xf32>
// CHECK: %[[R:.*]] = stablehlo.add %[[ZS]], %{{.*}} : tensor<2x3xf32>
// CHECK: return %[[R]]
func.func @normal(%mu: tensor<f32>, %sigma: tensor<f32>) -> tensor<2x3xf32> {
  %s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %0 = stablehlo.rng %mu, %sigma, %s, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// rng UNIFORM on integers: low + bits mod (high - low), an empty range made 1.
// CHECK-LABEL: func.func @uniform_int
// CHECK: stablehlo.subtract {{.*}} : tensor<4xui8>
// CHECK: stablehlo.convert {{.*}} : (tensor<4xui8>) -> tensor<4xui32>
// CHECK: stablehlo.compare EQ
// CHECK: stablehlo.select
// CHECK: stablehlo.remainder {{.*}} : tensor<4xui32>
// CHECK: stablehlo.add {{.*}} : tensor<4xui8>
func.func @uniform_int(%a: tensor<ui8>, %b: tensor<ui8>) -> tensor<4xui8> {
  %s = stablehlo.constant dense<[4]> : tensor<1xi64>
  %0 = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<ui8>, tensor<ui8>, tensor<1xi64>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// An empty output draws nothing and leaves the state as it was, for every algorithm
// (upstream's THREE_FRY lowering aborts on it).
// CHECK-LABEL: func.func @empty
// CHECK-SAME: (%[[S:.*]]: tensor<2xui64>)
// CHECK-NOT: rng_bit_generator
// CHECK: %[[E:.*]] = stablehlo.constant dense<> : tensor<0x4xui32>
// CHECK: return %[[S]], %[[E]]
func.func @empty(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<0x4xui32>) {
  %0, %1 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<0x4xui32>)
  return %0, %1 : tensor<2xui64>, tensor<0x4xui32>
}
