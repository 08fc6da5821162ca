// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-elementwise-in-place)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-elementwise-in-place,one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=BUF

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A matmul's bias + relu epilogue: the matmul result dies there, so it becomes the
// destination, read through the destination's block argument, and after
// bufferization the epilogue runs on the matmul's buffer: one 4x8 buffer, not two.
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg2 : tensor<8xf32>) outs(%[[MM]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %[[X:.*]]: f32):
// CHECK-NEXT: arith.addf %[[X]], %[[B]]
// BUF-LABEL: func.func @epilogue
// BUF-COUNT-1: memref.alloc()
// BUF-NOT: memref.alloc()
// BUF-NOT: memref.copy
// BUF: return
func.func @epilogue(%x: tensor<4x3xf32>, %w: tensor<3x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%m: f32, %bias: f32, %o: f32):
    %s = arith.addf %m, %bias : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Left alone: a caller's input (never written), a value used again later, a value
// read transposed (not at the element written), and an op that reads its destination.
// CHECK-LABEL: func.func @kept
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x4xf32>) outs(%[[E:.*]] : tensor<4x4xf32>)
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[N]] : tensor<4x4xf32>) outs(%[[E]] :
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[N]], %[[N]] : {{.*}}) outs(%[[E]] :
// CHECK: linalg.generic {{.*}} ins(%[[A]] : tensor<4x4xf32>) outs(%[[T]] :
func.func @kept(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %abs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%neg : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.absf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%neg, %neg : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %acc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%abs : tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %neg, %acc, %abs : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// An epilogue that reads its loop indices (`x @ y + 4 * eye`) keeps its own destination:
// read from the destination, upstream's vectorizer wrote it with a map of the wrong rank.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @indexed
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
func.func @indexed(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.matmul ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %d = arith.cmpi eq, %i, %j : index
    %f = arith.uitofp %d : i1 to f32
    %g = arith.mulf %f, %four : f32
    %s = arith.addf %a, %g : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
