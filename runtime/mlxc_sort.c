/* Stable f32 row sorts: see mlxc_sort.h for the contract.
 *
 * LSD radix sort on 32-bit keys, 8 bits a pass: four stable counting passes, each
 * recomputing the key from the value (cheaper than carrying it). A pass whose byte is
 * the same for every key moves nothing and is skipped. The key maps total order onto
 * unsigned order: a positive float's bits with the sign bit set, a negative float's
 * bits inverted.
 */
#include <stdlib.h>
#include <string.h>

#include "mlxc_sort.h"

static inline uint32_t key_of(float v, int canonical) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  if (canonical) {
    if ((bits & 0x7fffffffu) == 0)
      bits = 0; /* -0 as +0 */
    else if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu))
      bits = 0x7fc00000u; /* every NaN as the positive quiet NaN */
  }
  return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

static void sort_row(const float *in, float *out, float *scratch, int64_t n, int canonical) {
  size_t counts[4][256];
  memset(counts, 0, sizeof counts);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t k = key_of(in[i], canonical);
    counts[0][k & 0xff]++;
    counts[1][(k >> 8) & 0xff]++;
    counts[2][(k >> 16) & 0xff]++;
    counts[3][k >> 24]++;
  }
  const float *src = in;
  float *dst = scratch;
  for (int pass = 0; pass < 4; ++pass) {
    int shift = 8 * pass;
    size_t *count = counts[pass];
    int single = 0;
    for (int b = 0; b < 256; ++b)
      if (count[b] == (size_t)n)
        single = 1;
    if (single)
      continue; /* every key has this byte: the order stays as it is */
    size_t offset = 0;
    for (int b = 0; b < 256; ++b) {
      size_t c = count[b];
      count[b] = offset;
      offset += c;
    }
    for (int64_t i = 0; i < n; ++i) {
      uint32_t k = key_of(src[i], canonical);
      dst[count[(k >> shift) & 0xff]++] = src[i];
    }
    src = dst;
    dst = dst == scratch ? out : scratch;
  }
  if (src != out)
    memmove(out, src, (size_t)n * sizeof(float));
}

MLXC_EXPORT void mlxc_sort_f32_rows(const float *in, float *out, int64_t rows, int64_t n,
                                    int32_t canonical) {
  if (rows <= 0 || n <= 0)
    return;
  float stack[1024];
  float *scratch = n <= 1024 ? stack : malloc((size_t)n * sizeof(float));
  if (!scratch) {
    /* Without memory for the scratch row: insertion sort in place, O(n^2) but stable. */
    for (int64_t r = 0; r < rows; ++r) {
      float *row = out + r * n;
      if (row != in + r * n)
        memmove(row, in + r * n, (size_t)n * sizeof(float));
      for (int64_t i = 1; i < n; ++i) {
        float v = row[i];
        uint32_t k = key_of(v, canonical);
        int64_t j = i;
        while (j > 0 && key_of(row[j - 1], canonical) > k) {
          row[j] = row[j - 1];
          --j;
        }
        row[j] = v;
      }
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    sort_row(in + r * n, out + r * n, scratch, n, canonical);
  if (scratch != stack)
    free(scratch);
}
