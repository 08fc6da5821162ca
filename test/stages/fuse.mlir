// RUN: env MLXC_CPU_SCHEDULES=0 mlxc-opt %s --mlxc-pipeline=cpu --mlxc-start-after=linalg --mlxc-stop-after=fuse | FileCheck %s
// RUN: mlxc-opt %s --mlxc-pipeline=cpu --mlxc-start-after=linalg --mlxc-stop-after=fuse | FileCheck %s --check-prefix=VEC

// A chain of elementwise generics (as the linalg stage emits them for exp(x)*y+x)
// becomes one linalg.generic: no intermediate tensor.
// CHECK: mlxc.stage = "fuse"
// CHECK-LABEL: func.func public @main
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return

// With the CPU schedules (the default) the fused op is then vectorized: each input
// read once, the chain computed on vectors, one write, no linalg op left.
// VEC: mlxc.stage = "fuse"
// VEC-LABEL: func.func public @main
// VEC-NOT: linalg.
// VEC: %[[X:.*]] = vector.transfer_read %arg0{{.*}} : tensor<64xf32>, vector<64xf32>
// VEC: %[[Y:.*]] = vector.transfer_read %arg1{{.*}} : tensor<64xf32>, vector<64xf32>
// VEC: %[[E:.*]] = math.exp %[[X]] : vector<64xf32>
// VEC: %[[M:.*]] = arith.mulf %[[E]], %[[Y]] : vector<64xf32>
// VEC: %[[A:.*]] = arith.addf %[[M]], %[[X]] : vector<64xf32>
// VEC: %[[R:.*]] = vector.transfer_write %[[A]]
// VEC-NOT: linalg.
// VEC: return %[[R]]
#map = affine_map<(d0) -> (d0)>
module attributes {mlxc.entry = "main"} {
  func.func public @main(%arg0: tensor<64xf32>, %arg1: tensor<64xf32>) -> tensor<64xf32> {
    %0 = tensor.empty() : tensor<64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg0 : tensor<64xf32>) outs(%0 : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = math.exp %in : f32
      linalg.yield %6 : f32
    } -> tensor<64xf32>
    %2 = tensor.empty() : tensor<64xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%1, %arg1 : tensor<64xf32>, tensor<64xf32>) outs(%2 : tensor<64xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %6 = arith.mulf %in, %in_0 : f32
      linalg.yield %6 : f32
    } -> tensor<64xf32>
    %4 = tensor.empty() : tensor<64xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%3, %arg0 : tensor<64xf32>, tensor<64xf32>) outs(%4 : tensor<64xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %6 = arith.addf %in, %in_0 : f32
      linalg.yield %6 : f32
    } -> tensor<64xf32>
    return %5 : tensor<64xf32>
  }
}
