// RUN: mlxc-opt %s --mlxc-pipeline=cpu --mlxc-stop-after=import | FileCheck %s

// The import stage leaves one public function: composites expanded, helpers
// inlined and dropped, shapes refined, the signature recorded.
// CHECK: module @jit_f attributes {
// CHECK-SAME: mlxc.entry = "main"
// CHECK-SAME: mlxc.signature = {input_names = ["x"], inputs = [tensor<4xf32>], output_names = ["result"], outputs = [tensor<4xf32>]}
// CHECK-SAME: mlxc.stage = "import"
// CHECK: func.func public @main(%[[X:.*]]: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"})
// CHECK-NOT: stablehlo.composite
// CHECK-NOT: call
// CHECK: stablehlo.multiply
// CHECK: stablehlo.add {{.*}} : tensor<4xf32>
// CHECK: stablehlo.abs {{.*}} : tensor<4xf32>
// CHECK: return {{.*}} : tensor<4xf32>
// CHECK-NOT: func.func
module @jit_f {
  func.func public @main(%arg0: tensor<4xf32> loc("x")) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.composite "mlxc.twice" %arg0 {decomposition = @twice.impl} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @plus_one(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
  func.func private @twice.impl(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<2.0> : tensor<4xf32>
    %0 = stablehlo.multiply %arg0, %c : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  // The dynamic intermediate is made static by shape refinement.
  func.func private @plus_one(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<1.0> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
    %1 = stablehlo.abs %0 : tensor<?xf32>
    %2 = stablehlo.convert %1 : (tensor<?xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
