// RUN: env MLXC_LIBRARY_CALLS=0 mlxc-opt %s --pass-pipeline='builtin.module(mlxc-apply-cpu-schedules,canonicalize,cse)' | FileCheck %s
// RUN: mlxc-opt %s --pass-pipeline='builtin.module(mlxc-apply-cpu-schedules)' | FileCheck %s --check-prefix=LIB

// A matmul (generated: MLXC_LIBRARY_CALLS=0 keeps larger ones from the runtime's kernel): 256-deep cache tiles of the reduction, an 8x32 register tile of the
// result kept in registers (a vector loop-carried value) across the reduction loop,
// each step a broadcast of A times a row of B added with FMAs.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.
// CHECK: scf.for %[[K0:.*]] = %c0 to %c512 step %c256
// CHECK: scf.for %[[I:.*]] = %c0 to %c64 step %c8
// CHECK: scf.for %[[J:.*]] = %c0 to %c96 step %c32
// CHECK: %[[ACC:.*]] = vector.transfer_read %{{.*}}[%[[I]], %[[J]]]{{.*}} vector<8x32xf32>
// CHECK: scf.for {{.*}} = %c0 to %c256 step %c1 iter_args(%{{.*}} = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// CHECK: vector.transfer_write {{.*}}[%[[I]], %[[J]]]{{.*}} : vector<8x32xf32>
// CHECK: return
func.func @matmul(%a: tensor<64x512xf32>, %b: tensor<512x96xf32>) -> tensor<64x96xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x96xf32>) outs(%f : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// Elementwise: one row at a time in vectors of up to 64 (200 = 5 x 40: a divisor
// gives full tiles and static vectors, a multiple of 8 whole registers); the rows are
// independent tiles of an scf.forall (threads, when the work is worth it).
// CHECK-LABEL: func.func @exp
// CHECK: scf.forall ({{.*}}) in (16)
// CHECK: scf.for {{.*}} = %c0 to %c200 step %c40
// CHECK: math.exp {{.*}} : vector<40xf32>
func.func @exp(%a: tensor<16x200xf32>) -> tensor<16x200xf32> {
  %e = tensor.empty() : tensor<16x200xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<16x200xf32>) outs(%e : tensor<16x200xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<16x200xf32>
  return %r : tensor<16x200xf32>
}

// Booleans are bytes in memory but packed bits in LLVM vectors: one element per tile.
// CHECK-LABEL: func.func @compare
// CHECK: scf.forall ({{.*}}) in (16)
// CHECK: scf.for {{.*}} = %c0 to %c200 step %c1
// CHECK: vector.transfer_write {{.*}} : vector<1xi1>, tensor<1x200xi1>
func.func @compare(%a: tensor<16x200xf32>, %b: tensor<16x200xf32>) -> tensor<16x200xi1> {
  %e = tensor.empty() : tensor<16x200xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<16x200xf32>, tensor<16x200xf32>) outs(%e : tensor<16x200xi1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %c = arith.cmpf olt, %x, %y : f32
    linalg.yield %c : i1
  } -> tensor<16x200xi1>
  return %r : tensor<16x200xi1>
}

// A strided insert_slice (interior padding): the vectorizer would drop its strides,
// so the insert stays as it is, while the function's linalg ops (the relu, the fill)
// are vectorized one by one.
// CHECK-LABEL: func.func @strided_insert
// CHECK-DAG: arith.maximumf {{.*}} : vector<4xf32>
// CHECK-DAG: vector.transfer_write {{.*}} : vector<8xf32>, tensor<1x8xf32>
// CHECK: tensor.insert_slice {{.*}} [4, 4] [1, 2]
// CHECK-NOT: vector.
// CHECK: return
func.func @strided_insert(%a: tensor<4x4xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e4 = tensor.empty() : tensor<4x4xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e4 : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %cst : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %r = tensor.insert_slice %relu into %f[0, 0] [4, 4] [1, 2] : tensor<4x4xf32> into tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// A sum over rows (axis 0): vectors run along the parallel loop, which is the
// contiguous dimension of the input, with the partial sums carried in registers
// across the reduction loop; running along the reduction would read columns. The
// vector is 256 wide (16 registers: longer runs of each row), and the column tiles
// are independent: an scf.forall.
// CHECK-LABEL: func.func @column_sum
// CHECK: scf.forall (%[[T:.*]]) in (2)
// CHECK: %[[ACC:.*]] = vector.transfer_read %{{.*}} vector<256xf32>
// CHECK: scf.for %[[I:.*]] = %c0 to %c300 step %c1 iter_args(%{{.*}} = %[[ACC]]) -> (vector<256xf32>)
// CHECK: vector.transfer_read %arg0[%[[I]], %{{.*}}]{{.*}} vector<{{(1x)?}}256xf32>
// CHECK: arith.addf {{.*}} : vector<256xf32>
func.func @column_sum(%a: tensor<300x512xf32>) -> tensor<512xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<300x512xf32>) outs(%f : tensor<512xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<512xf32>
  return %r : tensor<512xf32>
}

// A rank-reducing insert_slice (a column): the vectorizer would write it along a
// row, so this function is not vectorized either.
// CHECK-LABEL: func.func @column_insert
// CHECK: tensor.insert_slice {{.*}} [4, 1] [1, 1] : tensor<4xf32> into tensor<4x5xf32>
// CHECK-NOT: vector.
// CHECK: return
func.func @column_insert(%x: tensor<4x5xf32>, %c: tensor<4xf32>, %j: index) -> tensor<4x5xf32> {
  %r = tensor.insert_slice %c into %x[0, %j] [4, 1] [1, 1] : tensor<4xf32> into tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// Rank-reducing inserts that drop only leading unit dimensions are written where the
// vectorizer puts them, so their functions are vectorized: a scalar stored into a
// vector (lax.scan's stacked output of a per-step sum) and a row.
// CHECK-LABEL: func.func @scalar_insert
// CHECK: %[[V:.*]] = vector.transfer_read %arg1[]{{.*}} : tensor<f32>, vector<f32>
// CHECK: vector.transfer_write %[[V]], %arg0[%arg2] : vector<f32>, tensor<32xf32>
func.func @scalar_insert(%x: tensor<32xf32>, %c: tensor<f32>, %j: index) -> tensor<32xf32> {
  %r = tensor.insert_slice %c into %x[%j] [1] [1] : tensor<f32> into tensor<32xf32>
  return %r : tensor<32xf32>
}

// CHECK-LABEL: func.func @row_insert
// CHECK: %[[V:.*]] = vector.transfer_read %arg1[%{{.*}}]{{.*}} : tensor<5xf32>, vector<5xf32>
// CHECK: vector.transfer_write %[[V]], %arg0[%arg2, %{{.*}}] {in_bounds = [true]} : vector<5xf32>, tensor<4x5xf32>
func.func @row_insert(%x: tensor<4x5xf32>, %c: tensor<5xf32>, %j: index) -> tensor<4x5xf32> {
  %r = tensor.insert_slice %c into %x[%j, 0] [1, 5] [1, 1] : tensor<5xf32> into tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// A row maximum: each row's 512 elements combined lane-wise into a 64-lane
// accumulator carried in registers across the row, then one halving tree
// (64 -> 32 -> ... -> 1) instead of a horizontal reduction per chunk.
// CHECK-LABEL: func.func @row_max
// CHECK: scf.forall (%[[I:.*]]) in (2048)
// CHECK: %[[ACC:.*]] = scf.for %[[K:.*]] = %c0 to %c512 step %c64 iter_args(%[[A:.*]] = %{{.*}}) -> (vector<64xf32>)
// CHECK:   %[[X:.*]] = vector.transfer_read %arg0[%[[I]], %[[K]]]{{.*}} vector<64xf32>
// CHECK:   arith.maximumf %[[A]], %[[X]] : vector<64xf32>
// CHECK: vector.extract_strided_slice %[[ACC]] {offsets = [32], sizes = [32], strides = [1]}
// CHECK: arith.maximumf {{.*}} : vector<32xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<2xf32>
// CHECK: %[[LAST:.*]] = arith.maximumf {{.*}} : vector<1xf32>
// CHECK: arith.maximumf %{{.*}}, %[[LAST]] : vector<1xf32>
func.func @row_max(%a: tensor<2048x512xf32>) -> tensor<2048xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<2048x512xf32>) outs(%f : tensor<2048xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.maximumf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<2048xf32>
  return %r : tensor<2048xf32>
}

// A full reduction of x * x: one accumulator across rows and columns; 144 columns
// give 48 lanes (a divisor up to 64 that fills whole registers; rows of 1000 take 8:
// 40 lanes filled registers only in part), halved to 3, then the odd last lane
// folded into lane 0.
// CHECK-LABEL: func.func @mean_square
// CHECK: scf.for {{.*}} = %c0 to %c16 step %c1 iter_args({{.*}}) -> (vector<48xf32>)
// CHECK: scf.for {{.*}} = %c0 to %c144 step %c48 iter_args({{.*}}) -> (vector<48xf32>)
// CHECK: arith.mulf {{.*}} : vector<48xf32>
// CHECK: arith.addf {{.*}} : vector<48xf32>
// CHECK: arith.addf {{.*}} : vector<24xf32>
// CHECK: arith.addf {{.*}} : vector<12xf32>
// CHECK: arith.addf {{.*}} : vector<6xf32>
// CHECK: %[[THREE:.*]] = arith.addf {{.*}} : vector<3xf32>
// CHECK: %[[ONE:.*]] = arith.addf {{.*}} : vector<1xf32>
// CHECK: %[[ODD:.*]] = vector.extract_strided_slice %[[THREE]] {offsets = [2], sizes = [1], strides = [1]} : vector<3xf32> to vector<1xf32>
// CHECK: arith.addf %[[ONE]], %[[ODD]] : vector<1xf32>
// CHECK-NOT: vector.multi_reduction
func.func @mean_square(%a: tensor<16x144xf32>) -> tensor<f32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%a : tensor<16x144xf32>) outs(%f : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// A transpose: 8x8 tiles, read along rows of the input, transposed in registers
// by one 64-lane shuffle, written along rows of the result.
// CHECK-LABEL: func.func @transpose
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: scf.for {{.*}} = %c0 to %c128 step %c8
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<128x64xf32>, vector<8x8xf32>
// CHECK: vector.shuffle {{.*}} : vector<64xf32>, vector<64xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8x8xf32>, tensor<8x128xf32>
func.func @transpose(%a: tensor<128x64xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<128x64xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// A convolution: one image per forall tile, one output row of 8 pixels x 32 output
// channels per register tile, kept in registers (a vector<8x32> loop-carried value)
// across the filter rows, filter columns and input-channel chunks: the unit dims
// that the 1-D decomposition leaves are cast away, so its read and write match.
// CHECK-LABEL: func.func @conv
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<1x16x16x32xf32>, vector<8x32xf32>
// CHECK: scf.for {{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK: scf.for {{.*}} = %c0 to %c3 step %c1 iter_args({{.*}}) -> (vector<8x32xf32>)
// CHECK: scf.for {{.*}} = %c0 to %c32 step %c8 iter_args({{.*}}) -> (vector<8x32xf32>)
// CHECK-COUNT-64: vector.fma {{.*}} : vector<32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8x32xf32>, tensor<1x16x16x32xf32>
func.func @conv(%x: tensor<4x18x18x32xf32>, %w: tensor<3x3x32x32xf32>) -> tensor<4x16x16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x16x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16x16x32xf32>) -> tensor<4x16x16x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<4x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%f : tensor<4x16x16x32xf32>) -> tensor<4x16x16x32xf32>
  return %r : tensor<4x16x16x32xf32>
}

// A 1-D convolution: the register tile of a decomposed 2-D one (8 positions x 32
// output channels kept in registers across the taps and 8-channel chunks).
// CHECK-LABEL: func.func @conv1d
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<1x256x64xf32>, vector<8x32xf32>
// CHECK: scf.for {{.*}} = %c0 to %c5 step %c1 iter_args(%{{.*}} = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK: scf.for {{.*}} = %c0 to %c64 step %c8 iter_args({{.*}}) -> (vector<8x32xf32>)
// CHECK-COUNT-64: vector.fma {{.*}} : vector<32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8x32xf32>, tensor<1x256x64xf32>
func.func @conv1d(%x: tensor<8x260x64xf32>, %w: tensor<5x64x64xf32>) -> tensor<8x256x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x256x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<8x256x64xf32>) -> tensor<8x256x64xf32>
  %r = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%x, %w : tensor<8x260x64xf32>, tensor<5x64x64xf32>) outs(%f : tensor<8x256x64xf32>) -> tensor<8x256x64xf32>
  return %r : tensor<8x256x64xf32>
}

// An int8 matmul into int32: the f32 register tile, int8 rows widened per step.
// CHECK-LABEL: func.func @int8_matmul
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} vector<8x32xi32>
// CHECK: scf.for {{.*}} = %c0 to %c256 step %c1 iter_args(%{{.*}} = %[[ACC]]) -> (vector<8x32xi32>)
// CHECK: arith.extsi {{.*}} : vector<32xi8> to vector<32xi32>
// CHECK-COUNT-8: arith.muli {{.*}} : vector<32xi32>
func.func @int8_matmul(%a: tensor<128x256xi8>, %b: tensor<256x256xi8>) -> tensor<128x256xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<128x256xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<128x256xi32>) -> tensor<128x256xi32>
  %r = linalg.matmul ins(%a, %b : tensor<128x256xi8>, tensor<256x256xi8>) outs(%f : tensor<128x256xi32>) -> tensor<128x256xi32>
  return %r : tensor<128x256xi32>
}

// A large contraction with no schedule (int64): every loop tiled to one element, not
// vectorized whole (one vector of the whole 128x256x256 iteration space).
// CHECK-LABEL: func.func @i64_matmul
// CHECK: scf.for {{.*}} = %c0 to %c128 step %c1
// CHECK: scf.for {{.*}} = %c0 to %c256 step %c1
// CHECK: scf.for {{.*}} = %c0 to %c256 step %c1 iter_args({{.*}}) -> (vector<1xi64>)
// CHECK: arith.muli {{.*}} : vector<1xi64>
// CHECK-NOT: vector<128x256
// CHECK: return
func.func @i64_matmul(%a: tensor<128x256xi64>, %b: tensor<256x256xi64>) -> tensor<128x256xi64> {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<128x256xi64>
  %f = linalg.fill ins(%c0 : i64) outs(%e : tensor<128x256xi64>) -> tensor<128x256xi64>
  %r = linalg.matmul ins(%a, %b : tensor<128x256xi64>, tensor<256x256xi64>) outs(%f : tensor<128x256xi64>) -> tensor<128x256xi64>
  return %r : tensor<128x256xi64>
}

// By default an f32 product of many rows with nothing fused into it is left whole,
// with its zero fill, for the runtime's kernel (mlxc-library-matmuls); no trace of
// setting it aside remains.
// LIB-LABEL: func.func @big_matmul
// LIB-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// LIB-NEXT: %[[E:.*]] = tensor.empty() : tensor<256x96xf32>
// LIB-NEXT: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<256x96xf32>)
// LIB-NEXT: %[[R:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<256x512xf32>, tensor<512x96xf32>) outs(%[[F]] : tensor<256x96xf32>)
// LIB-NEXT: return %[[R]]
// LIB-NOT: mlxc_set_aside
func.func @big_matmul(%a: tensor<256x512xf32>, %b: tensor<512x96xf32>) -> tensor<256x96xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x96xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<256x96xf32>) -> tensor<256x96xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x96xf32>) outs(%f : tensor<256x96xf32>) -> tensor<256x96xf32>
  return %r : tensor<256x96xf32>
}
