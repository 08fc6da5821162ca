/* The C ABI of an mlxc artifact: the shared library `mlxc compile -o model.so` or
 * `exe.save("model.so")` writes.
 *
 * An artifact exports exactly four symbols and needs nothing but the C library
 * and libm (mlxc's native runtime is linked into it):
 *
 *   mlxc_entry(buffers)   runs the program. `buffers` holds one pointer per input,
 *                         then one per output, in the order of the signature. Each
 *                         points to a dense, row-major array of the signature's
 *                         shape and element type (bool is one byte, bf16 and f16 two).
 *                         Inputs are only read; every output element is written.
 *                         Outputs must not overlap the inputs or each other: the
 *                         program may use an output as scratch before writing it.
 *                         Buffers need the alignment of their element type.
 *                         No state is kept between calls: one artifact may be
 *                         called from several threads at once. Temporaries come
 *                         from malloc; the call does not fail otherwise.
 *   mlxc_manifest()       a NUL-terminated JSON object, valid for the life of the
 *                         library: {"abi": 1, "signature": {"entry", "inputs",
 *                         "outputs"}, "target": {...}, "mlxc_version", ...}; each
 *                         input and output is {"name", "shape", "element_type"}
 *                         with MLIR element types (f32, bf16, i32, ui8, i1, ...).
 *   mlxc_abi_version()    MLXC_ABI_VERSION of the mlxc that wrote the artifact.
 *   mlxc_signature_sha256 a NUL-terminated hex SHA-256 of the signature the code was
 *                         compiled for (the manifest's, as mlxc writes it as JSON),
 *                         defined by the program's code itself: mlxc.load refuses a
 *                         manifest that does not match it.
 *
 * A file written by mlxc also ends in a checksum after the ELF data: "MLXC-SUM", the
 * byte count it covers (little-endian, 8 bytes) and the SHA-256 of those bytes.
 * mlxc.load verifies it, so a truncated or edited artifact is refused before it is
 * opened; the dynamic loader ignores it.
 *
 * The header `mlxc compile` writes beside the artifact starts with this text and
 * adds the program's own sizes (MLXC_NUM_INPUTS, mlxc_buffer_bytes[], ...).
 * Every artifact exports the same names: to use two in one program, open them
 * with dlopen() and look the symbols up in each.
 */
#ifndef MLXC_ARTIFACT_H
#define MLXC_ARTIFACT_H

#include <stdint.h>

#define MLXC_ABI_VERSION 2

#ifdef __cplusplus
extern "C" {
#endif

void mlxc_entry(void **buffers);
const char *mlxc_manifest(void);
int mlxc_abi_version(void);
extern const char mlxc_signature_sha256[65];

#ifdef __cplusplus
}
#endif

#endif /* MLXC_ARTIFACT_H */
