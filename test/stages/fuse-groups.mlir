// RUN: env MLXC_CPU_SCHEDULES=0 mlxc-opt %s --mlxc-pipeline=cpu --mlxc-start-after=linalg --mlxc-stop-after=fuse | FileCheck %s

// The fusion groups of a softmax, as the fuse stage leaves them before the CPU
// schedules tile them (MLXC_CPU_SCHEDULES=0 MLXC_DUMP_DIR=... shows them in
// 04-fuse.mlir): one linalg.generic per group, three groups, as XLA makes them. The
// max reduction; the sum, which recomputes exp(x - max); the divide, which recomputes
// it again. Only the two row vectors are temporaries; no 4x8 tensor is stored between
// groups.
// CHECK: mlxc.stage = "fuse"
// CHECK-LABEL: func.func public @main
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %[[MAX]] : tensor<4x8xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0, %[[MAX]], %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
// CHECK: return %[[OUT]]
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0) -> ()>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0, d1) -> (d0, 0)>
module attributes {mlxc.entry = "main", mlxc.stage = "linalg"} {
  func.func public @main(%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_1 = arith.constant 0xFF800000 : f32
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.fill ins(%cst_1 : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.maximumf %out, %in : f32
      linalg.yield %20 : f32
    } -> tensor<4xf32>
    %3 = tensor.empty() : tensor<4xf32>
    %4 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel"]} ins(%cst_0 : tensor<f32>) outs(%3 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %5 = tensor.empty() : tensor<4xf32>
    %6 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%4, %2 : tensor<4xf32>, tensor<4xf32>) outs(%5 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %20 = arith.maximumf %in, %in_3 : f32
      linalg.yield %20 : f32
    } -> tensor<4xf32>
    %expanded = tensor.expand_shape %6 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
    %7 = tensor.empty() : tensor<4x8xf32>
    %8 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded : tensor<4x1xf32>) outs(%7 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x8xf32>
    %9 = tensor.empty() : tensor<4x8xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %8 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%9 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %20 = arith.subf %in, %in_3 : f32
      linalg.yield %20 : f32
    } -> tensor<4x8xf32>
    %11 = tensor.empty() : tensor<4x8xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<4x8xf32>) outs(%11 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = math.exp %in : f32
      linalg.yield %20 : f32
    } -> tensor<4x8xf32>
    %13 = tensor.empty() : tensor<4xf32>
    %14 = linalg.fill ins(%cst : f32) outs(%13 : tensor<4xf32>) -> tensor<4xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%12 : tensor<4x8xf32>) outs(%14 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.addf %out, %in : f32
      linalg.yield %20 : f32
    } -> tensor<4xf32>
    %expanded_2 = tensor.expand_shape %15 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
    %16 = tensor.empty() : tensor<4x8xf32>
    %17 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_2 : tensor<4x1xf32>) outs(%16 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x8xf32>
    %18 = tensor.empty() : tensor<4x8xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%12, %17 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%18 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %20 = arith.divf %in, %in_3 : f32
      linalg.yield %20 : f32
    } -> tensor<4x8xf32>
    return %19 : tensor<4x8xf32>
  }
}
