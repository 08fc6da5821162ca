/* Stable sorts of f32 rows for generated code.
 *
 * JAX sorts floats with one comparator: -0 counts as +0, every NaN as the positive
 * quiet NaN, then IEEE total order. mlxc-library-sorts recognizes it (and plain total
 * order) and calls this instead of generating a merge sort: a radix sort is O(n), and
 * its scratch row is the runtime's, as std::stable_sort's is inside XLA's sort call.
 */
#ifndef MLXC_SORT_H
#define MLXC_SORT_H

#include <stdint.h>

#include "mlxc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each of `rows` dense rows of `n` floats, from `in` (rows n apart) to `out`, stably
 * sorted ascending by IEEE total order; with `canonical` set, -0 sorts as +0 and every
 * NaN as the positive quiet NaN (JAX's comparator). `out` receives the values
 * themselves, unchanged. `in` and `out` may be the same buffer. */
MLXC_EXPORT void mlxc_sort_f32_rows(const float *in, float *out, int64_t rows, int64_t n,
                                    int32_t canonical);

#ifdef __cplusplus
}
#endif

#endif
