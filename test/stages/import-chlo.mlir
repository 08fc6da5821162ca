// RUN: mlxc-opt %s --mlxc-pipeline=cpu --mlxc-stop-after=import | FileCheck %s

// `jax.jit(f).lower(x).as_text()` prints CHLO ops; the import stage parses them and
// rewrites them into StableHLO (chlo-legalize-to-stablehlo), so no CHLO is left.
// CHECK: func.func public @main
// CHECK-NOT: chlo.
// CHECK: stablehlo.clamp
// CHECK: stablehlo.multiply
// CHECK: stablehlo.log
// CHECK-NOT: chlo.
// CHECK: return
module @jit_f {
  func.func public @main(%arg0: tensor<8xf32> loc("x")) -> tensor<8xf32> {
    %0 = chlo.erf %arg0 : tensor<8xf32> -> tensor<8xf32>
    %1 = chlo.lgamma %0 : tensor<8xf32> -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
}
