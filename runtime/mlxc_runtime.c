/* mlxc's native runtime: what generated code and the Python runtime call.
 *
 * Kept to plain C with no dependencies so it builds with any C compiler at
 * `pip install` time and loads where the compiler is not installed.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlxc_runtime.h"

/* MLIR's strided memref descriptor, as `finalize-memref-to-llvm` lays it out:
 * two pointers, an offset, then `rank` sizes followed by `rank` strides. */
typedef struct {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizes_and_strides[];
} StridedMemRef;

typedef struct {
  int64_t rank;
  StridedMemRef *descriptor;
} UnrankedMemRef;

/* Called by generated code for `memref.copy` between buffers whose layouts are not
 * both the identity (a slice of a larger buffer, a transposed view...). */
MLXC_EXPORT void memrefCopy(int64_t elem_size, UnrankedMemRef *src_arg,
                            UnrankedMemRef *dst_arg) {
  int64_t rank = src_arg->rank;
  StridedMemRef *src = src_arg->descriptor;
  StridedMemRef *dst = dst_arg->descriptor;
  char *src_base = src->aligned + src->offset * elem_size;
  char *dst_base = dst->aligned + dst->offset * elem_size;
  if (rank == 0) {
    memcpy(dst_base, src_base, (size_t)elem_size);
    return;
  }
  const int64_t *sizes = src->sizes_and_strides;
  const int64_t *src_strides = src->sizes_and_strides + rank;
  const int64_t *dst_strides = dst->sizes_and_strides + rank;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return;

  /* Copy the innermost dimension as one block when it is contiguous on both sides. */
  int64_t inner = sizes[rank - 1];
  int contiguous = src_strides[rank - 1] == 1 && dst_strides[rank - 1] == 1;
  int64_t outer_rank = contiguous ? rank - 1 : rank;

  int64_t index[64] = {0};
  if (rank > 64)
    return; /* MLIR ranks are far below this; refuse rather than overflow. */
  char *s = src_base, *d = dst_base;
  for (;;) {
    if (contiguous) {
      memcpy(d, s, (size_t)(inner * elem_size));
    } else {
      memcpy(d, s, (size_t)elem_size);
    }
    /* Advance the multi-index over the outer dimensions, odometer style. */
    int64_t dim = outer_rank - 1;
    for (; dim >= 0; --dim) {
      index[dim]++;
      s += src_strides[dim] * elem_size;
      d += dst_strides[dim] * elem_size;
      if (index[dim] < sizes[dim])
        break;
      s -= src_strides[dim] * elem_size * sizes[dim];
      d -= dst_strides[dim] * elem_size * sizes[dim];
      index[dim] = 0;
    }
    if (dim < 0)
      return;
  }
}

/* The JIT's packed wrapper `_mlir_<fn>(void **args)` wants a pointer to each
 * argument; our entry points take one argument, the array of buffer pointers. */
MLXC_EXPORT void mlxc_call_packed(void (*fn)(void **), void **buffers) {
  void *arg = buffers;
  void *packed[1] = {&arg};
  fn(packed);
}

/* The checked call a failed allocation unwinds to, on this thread. */
static _Thread_local jmp_buf *checked_call;
static _Thread_local size_t failed_bytes;

MLXC_EXPORT size_t mlxc_call_checked(void (*fn)(void **), void **buffers, int packed) {
  jmp_buf here;
  jmp_buf *outer = checked_call;
  failed_bytes = 0;
  if (setjmp(here) == 0) {
    checked_call = &here;
    if (packed)
      mlxc_call_packed(fn, buffers);
    else
      fn(buffers);
  }
  checked_call = outer;
  return failed_bytes;
}

void mlxc_alloc_failed(size_t size) {
  /* Unwinding skips the generated code's frees (a leak, not a crash) but must not
   * leave a parallel region half run: there the process still ends, with a reason. */
  if (checked_call && !mlxc_in_parallel_region()) {
    failed_bytes = size ? size : 1;
    longjmp(*checked_call, 1);
  }
  fprintf(stderr, "mlxc: out of memory: a temporary of %zu bytes could not be allocated\n",
          size);
  abort();
}

MLXC_EXPORT const char *mlxc_runtime_version(void) { return MLXC_RUNTIME_VERSION; }
