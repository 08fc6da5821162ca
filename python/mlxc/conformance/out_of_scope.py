"""Conformance tests mlxc does not aim to pass, by file, each with the reason.

Paths are relative to the suite root (`.../conformance/stablehlo`); a trailing `/*`
covers a folder. mlxc compiles for one device: collectives, replica/partition ids,
infeed/outfeed, send/recv and token ops have no meaning there.
"""

OUT_OF_SCOPE: dict[str, str] = {
    "interpret/all_gather.mlir": "collective across replicas; mlxc compiles for one device",
    "interpret/all_reduce.mlir": "collective across replicas; mlxc compiles for one device",
    "interpret/all_to_all.mlir": "collective across replicas; mlxc compiles for one device",
    "interpret/collective_broadcast.mlir": "collective across replicas; mlxc compiles for one device",
    "interpret/collective_permute.mlir": "collective across replicas; mlxc compiles for one device",
    "interpret/collective_reduce.mlir": "collective across replicas; mlxc compiles for one device",
    "interpret/reduce_scatter.mlir": "collective across replicas; mlxc compiles for one device",
    "interpret/replica_id.mlir": "replica ids need several replicas",
    "interpret/partition_id.mlir": "partition ids need several partitions",
    "interpret/infeed.mlir": "infeed needs a host feed channel",
    "interpret/outfeed.mlir": "outfeed needs a host feed channel",
    "interpret/send_recv.mlir": "send/recv need a second device",
    "interpret/after_all.mlir": "token ops only order side effects mlxc does not have",
    "interpret/probe.mlir": "check.expect_serialized_eq compares the interpreter's probe files",
    "interpret/printing.mlir": "tests the interpreter's printing (FileCheck), has no checks",
    "interpret/api_input_arguments.mlir": "tests the interpreter's command line, has no checks",
    # Invalid programs: mlxc rejects them at the call with the verifier's message
    # ("expects window-strides to have same dimension-size as size of window dimensions").
    "testdata/dynamic/conv_general_dilated_1d_stride_2_even_dynamic.mlir":
        "invalid program: a 1-D dynamic_conv with two window strides",
    "testdata/dynamic/conv_general_dilated_1d_stride_2_odd_dynamic.mlir":
        "invalid program: a 1-D dynamic_conv with two window strides",
}


def reason_for(relpath: str) -> str | None:
    """Why `relpath` is out of scope, or None when mlxc should pass it."""
    if relpath in OUT_OF_SCOPE:
        return OUT_OF_SCOPE[relpath]
    for pattern, reason in OUT_OF_SCOPE.items():
        if pattern.endswith("/*") and relpath.startswith(pattern[:-1]):
            return reason
    return None
