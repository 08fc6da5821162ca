/* mlxc native runtime: the functions generated code and loaders may call. */
#ifndef MLXC_RUNTIME_H
#define MLXC_RUNTIME_H

#include <stdint.h>

#define MLXC_RUNTIME_VERSION "0.1.0"

#if defined(_WIN32)
#define MLXC_EXPORT __declspec(dllexport)
#else
#define MLXC_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Calls a JIT packed wrapper `_mlir_<fn>` with the entry point's buffer array. */
MLXC_EXPORT void mlxc_call_packed(void (*fn)(void **), void **buffers);

MLXC_EXPORT const char *mlxc_runtime_version(void);

/* Temporaries of generated code (mlxc_alloc.c): freed large blocks are kept for reuse. */
#include <stddef.h>
MLXC_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size);
MLXC_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
MLXC_EXPORT void _mlir_memref_to_llvm_free(void *ptr);
/* Bytes of freed blocks kept for reuse right now. */
MLXC_EXPORT size_t mlxc_kept_bytes(void);

/* Runs an entry point (through its packed wrapper when `packed`) so that a temporary
 * it cannot allocate ends the call instead of the process: returns 0 when the call
 * ran to its end, else the bytes of the allocation that failed (its temporaries so
 * far are not freed). */
MLXC_EXPORT size_t mlxc_call_checked(void (*fn)(void **), void **buffers, int packed);

/* Internal to the runtime: mlxc_alloc.c reports a failed allocation to the checked
 * call (or, outside one or inside a parallel region, prints it and aborts). */
void mlxc_alloc_failed(size_t size);
int mlxc_in_parallel_region(void);

#ifdef __cplusplus
}
#endif

#endif
