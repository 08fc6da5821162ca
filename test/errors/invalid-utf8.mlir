// RUN: mlxc-opt %s --split-input-file --verify-diagnostics

// A string (here a location) whose bytes are not UTF-8 is refused where it is written.
// A comment may quote one: "x\F8s".
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{string "x\F8s" is not valid UTF-8}}
  %0 = stablehlo.add %a, %a : tensor<4xf32> loc("x\F8s")
  return %0 : tensor<4xf32>
}

// -----

// expected-error @below {{string "\C3(" is not valid UTF-8}}
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> attributes {doc = "\C3("} {
  return %a : tensor<4xf32>
}
