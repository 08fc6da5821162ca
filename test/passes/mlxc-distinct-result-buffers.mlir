// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-distinct-result-buffers)' | FileCheck %s
// RUN: mlxc-opt %s --split-input-file --pass-pipeline='builtin.module(mlxc-distinct-result-buffers,buffer-results-to-out-params{hoist-static-allocs modify-public-functions})' | FileCheck %s --check-prefix=OUT

// A buffer returned twice: the repeat becomes a copy, so each result has its own.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = memref.alloc() : memref<5xf32>
// CHECK-NEXT: linalg.abs {{.*}} outs(%[[A]] :
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<5xf32>
// CHECK-NEXT: linalg.negf
// CHECK-NEXT: %[[COPY:.*]] = memref.alloc() : memref<5xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[COPY]]
// CHECK-NEXT: return %[[A]], %[[COPY]], %[[B]] :

// After hoisting, each result writes its own output argument.
// OUT: func.func @main(%arg0: memref<5xf32>, %[[O0:.*]]: memref<5xf32>, %[[O1:.*]]: memref<5xf32>, %[[O2:.*]]: memref<5xf32>)
// OUT: linalg.abs ins(%arg0 : memref<5xf32>) outs(%[[O0]] : memref<5xf32>)
// OUT: memref.copy %[[O0]], %[[O1]]
func.func @main(%x: memref<5xf32>) -> (memref<5xf32>, memref<5xf32>, memref<5xf32>) {
  %a = memref.alloc() : memref<5xf32>
  linalg.abs ins(%x : memref<5xf32>) outs(%a : memref<5xf32>)
  %b = memref.alloc() : memref<5xf32>
  linalg.negf ins(%x : memref<5xf32>) outs(%b : memref<5xf32>)
  return %a, %a, %b : memref<5xf32>, memref<5xf32>, memref<5xf32>
}

// -----

// A private function (a layer mlxc-outline-layers made, two of whose results the fuse
// stage folded into one value) too: buffer-results-to-out-params crashed on it.
// CHECK-LABEL: func.func private @main_layer0
// CHECK: %[[A:.*]] = memref.alloc() : memref<5xf32>
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<5xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[COPY]]
// CHECK-NEXT: return %[[A]], %[[COPY]] :
// OUT: func.func private @main_layer0(%arg0: memref<5xf32>, %[[O0:.*]]: memref<5xf32>, %[[O1:.*]]: memref<5xf32>)
// OUT: linalg.abs ins(%arg0 : memref<5xf32>) outs(%[[O0]] : memref<5xf32>)
// OUT: memref.copy %[[O0]], %[[O1]]
// OUT: call @main_layer0(%arg0, %{{.*}}, %{{.*}})
func.func private @main_layer0(%x: memref<5xf32>) -> (memref<5xf32>, memref<5xf32>) {
  %a = memref.alloc() : memref<5xf32>
  linalg.abs ins(%x : memref<5xf32>) outs(%a : memref<5xf32>)
  return %a, %a : memref<5xf32>, memref<5xf32>
}
func.func @main(%x: memref<5xf32>) -> (memref<5xf32>, memref<5xf32>) {
  %0:2 = call @main_layer0(%x) : (memref<5xf32>) -> (memref<5xf32>, memref<5xf32>)
  return %0#0, %0#1 : memref<5xf32>, memref<5xf32>
}
