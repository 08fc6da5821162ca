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

#ifdef __cplusplus
}
#endif

#endif
