/* f32 matrix products that generated code calls instead of compiling its own: see
 * mlxc_gemm.h for why and for the contract.
 *
 * A blocked product tuned for the small and mid-size products of real programs (tens
 * to a few hundred rows, data already in L1/L2) as much as for large ones:
 *
 * - A 6 x 64 register tile of C (24 of the 32 AVX-512 registers) accumulates a K-block
 *   deep reduction (K split into equal blocks of at most 256), then is stored or added
 *   to C. Edge tiles (1-5 rows, 16-48 columns) have their own instances: nothing is
 *   padded, so a tile must not read rows past the end, and a narrow panel should not
 *   pay for 64 columns.
 * - A and B are read in place. A row-major or transposed (a 6-row micro-panel stays in
 *   L1 while it meets every B panel): packing it, a 6-way transpose element by element,
 *   cost as much as the arithmetic on 64-column products, and even a transposed A with
 *   columns 4 KiB apart ran 5% faster in place. A row-major B, 64 columns at a time,
 *   K block by K block (at most 256 x 512, 512 KiB: half of L2), by 192 rows at a time:
 *   every tile after the first reads the panel from L2, as it would read a packed copy,
 *   and the copy cost 12% of the time on 64-row products and 32% on 10-row ones.
 * - What is packed: a transposed B (16 x 16 blocks transposed in registers), B's narrow
 *   edge panels (zero-padded to 16 columns), and an A or B with neither stride 1.
 *
 * Threads take tasks of (batch, column chunk, row chunk) from mlxc's pool through the
 * same OpenMP entry points generated code uses. Columns are split first: each task then
 * reads a disjoint part of B and nothing is done twice; rows are split only when there
 * are too few column panels (each such task then reads the narrow B again). Every
 * element of C gets the same sums in the same order whatever the split, so one thread
 * and several give the same bits.
 */
#include <stdlib.h>
#include <string.h>

#include "mlxc_gemm.h"
#include "mlxc_parallel.h"

#define MR 6
#define NR 64
#define KC 256
#define NC 512 /* columns a task takes on one thread */
/* Below this many multiply-adds (~2.5 us on one core) a product runs on its caller
 * alone: waking a worker costs about as much as the second core saves. */
#define THREADED_WORK (1 << 19)
/* Rows that read a K block of B's columns (at most 256 x 512: 512 KiB, half of L2) in
 * place before the next rows read it again: A's K block for them is 192 KiB. */
#define ROW_BLOCK 192
/* Multiply-adds a task keeps at least when columns are split further for balance
 * (~10 us on one core). */
#define TASK_WORK (1 << 21)
/* Rows a task takes at least when rows are split (each such task reads B again). */
#define MIN_CHUNK_ROWS (4 * MR)

/* C (rows x nr, rows ldc apart) = or += A (rows x kc, element (r, kk) at
 * a[r * ars + kk * acs]) times a B panel (kc rows of round_up(nr, 16) values, ldb apart:
 * packed, or B itself). */
typedef void (*tile_fn)(int64_t kc, const float *a, int64_t ars, int64_t acs, const float *pb,
                        int64_t ldb, float *c, int64_t ldc, int nr, int overwrite);

/* rows x nr of B, element (kk, j) at src[kk * row_stride + j * col_stride], to rows of w
 * (a multiple of 16) at dst, zero-padded. copy_rows: col_stride 1; copy_cols: row_stride
 * 1 (a transposed B). */
typedef void (*copy_fn)(float *dst, const float *src, int64_t rows, int64_t stride, int nr,
                        int w);

typedef struct {
  tile_fn tiles[MR][4]; /* [rows - 1][vectors - 1] */
  copy_fn copy_rows, copy_cols;
} kernels;

typedef struct {
  int64_t batch, m, n, k;
  const float *a, *b;
  float *c;
  int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs, c_bs, c_rs, c_cs;
  int accumulate;
  int a_in_place;                 /* A's rows or columns contiguous: else packed */
  int64_t kc;                     /* depth of a K block (K split into equal blocks) */
  int64_t col_width, col_chunks;  /* a task's columns: a multiple of NR */
  int64_t row_height, row_chunks; /* a task's rows: a multiple of MR */
  const kernels *kern;
} gemm_args;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* ---- packing (the AVX-512 copies are with the tiles below) ---- */

/* Any strides: 8 columns at a time, down the whole depth, so 8 source streams are open
 * at once whatever B's strides. */
static void gather(float *dst, const float *src, int64_t rows, int64_t rs, int64_t cs, int nr,
                   int w) {
  for (int j0 = 0; j0 < nr; j0 += 8) {
    int jn = nr - j0 < 8 ? nr - j0 : 8;
    for (int64_t kk = 0; kk < rows; ++kk) {
      const float *s = src + kk * rs + j0 * cs;
      for (int j = 0; j < jn; ++j)
        dst[kk * w + j0 + j] = s[j * cs];
    }
  }
  for (int64_t kk = 0; kk < rows; ++kk)
    for (int j = nr; j < w; ++j)
      dst[kk * w + j] = 0.0f;
}

/* A panel of B: rows (k) x nr (at most NR) columns from (k0, c0), to rows of
 * round_up(nr, 16) values at out, zeros past the last column. */
static void pack_b(const gemm_args *g, const float *b, int64_t k0, int64_t rows, int64_t c0,
                   int nr, float *out) {
  int w = (nr + 15) / 16 * 16;
  const float *src = b + k0 * g->b_rs + c0 * g->b_cs;
  if (g->b_cs == 1)
    g->kern->copy_rows(out, src, rows, g->b_rs, nr, w);
  else if (g->b_rs == 1)
    g->kern->copy_cols(out, src, rows, g->b_cs, nr, w);
  else
    gather(out, src, rows, g->b_rs, g->b_cs, nr, w);
}

/* rows (<= MR) x depth of A from (r0, k0): out[kk * MR + r]. */
static void pack_a(const gemm_args *g, const float *a, int64_t r0, int64_t rows, int64_t k0,
                   int64_t depth, float *out) {
  const float *src = a + r0 * g->a_rs + k0 * g->a_cs;
  for (int64_t kk = 0; kk < depth; ++kk)
    for (int64_t r = 0; r < rows; ++r)
      out[kk * MR + r] = src[kk * g->a_cs + r * g->a_rs];
}

static void copy_cols_portable(float *dst, const float *src, int64_t rows, int64_t stride,
                               int nr, int w) {
  gather(dst, src, rows, 1, stride, nr, w);
}

static void copy_rows_portable(float *dst, const float *src, int64_t rows, int64_t src_stride,
                               int nr, int w) {
  for (int64_t kk = 0; kk < rows; ++kk) {
    memcpy(dst + kk * w, src + kk * src_stride, (size_t)nr * sizeof(float));
    for (int j = nr; j < w; ++j)
      dst[kk * w + j] = 0.0f;
  }
}

/* ---- the register tiles ---- */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX512_KERNEL 1
#define AVX512 __attribute__((target("avx512f")))

/* The tile of `rows` rows and `nv` vectors of 16 columns (both constants where it is
 * inlined, so the accumulators stay in registers). */
static inline __attribute__((always_inline)) AVX512 void
tile_avx512(const int rows, const int nv, int64_t kc, const float *a, int64_t ars, int64_t acs,
            const float *pb, int64_t ldb, float *c, int64_t ldc, int nr, int overwrite) {
  __m512 acc[MR][4];
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < nv; ++j)
      acc[r][j] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < kc; ++kk) {
    __m512 bv[4];
#pragma GCC unroll 4
    for (int j = 0; j < nv; ++j)
      bv[j] = _mm512_loadu_ps(pb + 16 * j);
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r) {
      __m512 av = _mm512_set1_ps(a[r * ars]);
#pragma GCC unroll 4
      for (int j = 0; j < nv; ++j)
        acc[r][j] = _mm512_fmadd_ps(av, bv[j], acc[r][j]);
    }
    a += acs;
    pb += ldb;
  }
  int left = nr - 16 * (nv - 1);
  __mmask16 last = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < nv; ++j) {
      float *p = c + r * ldc + 16 * j;
      if (j < nv - 1 || left >= 16) {
        _mm512_storeu_ps(p, overwrite ? acc[r][j] : _mm512_add_ps(_mm512_loadu_ps(p), acc[r][j]));
      } else {
        __m512 v = overwrite ? acc[r][j]
                             : _mm512_add_ps(_mm512_maskz_loadu_ps(last, p), acc[r][j]);
        _mm512_mask_storeu_ps(p, last, v);
      }
    }
}

#define AVX512_TILE(R, V)                                                                     \
  static AVX512 void tile_avx512_##R##_##V(int64_t kc, const float *a, int64_t ars,          \
                                           int64_t acs, const float *pb, int64_t ldb,        \
                                           float *c, int64_t ldc, int nr, int overwrite) {   \
    tile_avx512(R, V, kc, a, ars, acs, pb, ldb, c, ldc, nr, overwrite);                     \
  }
#define AVX512_ROW(R) AVX512_TILE(R, 1) AVX512_TILE(R, 2) AVX512_TILE(R, 3) AVX512_TILE(R, 4)
AVX512_ROW(1)
AVX512_ROW(2)
AVX512_ROW(3)
AVX512_ROW(4)
AVX512_ROW(5)
AVX512_ROW(6)

/* A generic memcpy of a variable length, row by row, is several times slower. */
static AVX512 void copy_rows_avx512(float *dst, const float *src, int64_t rows,
                                    int64_t src_stride, int nr, int w) {
  if (nr == NR) {
    for (int64_t kk = 0; kk < rows; ++kk, dst += NR, src += src_stride) {
      __m512 v0 = _mm512_loadu_ps(src), v1 = _mm512_loadu_ps(src + 16);
      __m512 v2 = _mm512_loadu_ps(src + 32), v3 = _mm512_loadu_ps(src + 48);
      _mm512_store_ps(dst, v0);
      _mm512_store_ps(dst + 16, v1);
      _mm512_store_ps(dst + 32, v2);
      _mm512_store_ps(dst + 48, v3);
    }
    return;
  }
  for (int64_t kk = 0; kk < rows; ++kk, dst += w, src += src_stride)
    for (int j = 0; j < w; j += 16) {
      int left = nr - j;
      __mmask16 mask = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
      _mm512_store_ps(dst + j, _mm512_maskz_loadu_ps(mask, src + j));
    }
}

/* 16 vectors r[i] = row i of a 16 x 16 block become its columns. */
static inline __attribute__((always_inline)) AVX512 void transpose16(__m512 r[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    r[4 * i + 0] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      t[8 * h + j] = _mm512_shuffle_f32x4(r[8 * h + j], r[8 * h + 4 + j], 0x88);
      t[8 * h + 4 + j] = _mm512_shuffle_f32x4(r[8 * h + j], r[8 * h + 4 + j], 0xdd);
    }
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
  }
}

/* A transposed B (each column contiguous) by 16 x 16 blocks transposed in registers: the
 * 8-column scalar gather took a fifth of attention's q k^T product. */
static AVX512 void copy_cols_avx512(float *dst, const float *src, int64_t rows, int64_t stride,
                                    int nr, int w) {
  for (int j0 = 0; j0 < w; j0 += 16)
    for (int64_t k0 = 0; k0 < rows; k0 += 16) {
      int64_t kn = rows - k0 < 16 ? rows - k0 : 16;
      __mmask16 mask = kn == 16 ? (__mmask16)0xffff : (__mmask16)((1u << kn) - 1);
      __m512 r[16];
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j)
        r[j] = j0 + j < nr ? _mm512_maskz_loadu_ps(mask, src + k0 + (j0 + j) * stride)
                           : _mm512_setzero_ps();
      transpose16(r);
#pragma GCC unroll 16
      for (int kk = 0; kk < 16; ++kk)
        if (kk < kn)
          _mm512_store_ps(dst + (k0 + kk) * w + j0, r[kk]);
    }
}

#define AVX512_ENTRY(R)                                                                       \
  {tile_avx512_##R##_1, tile_avx512_##R##_2, tile_avx512_##R##_3, tile_avx512_##R##_4}
static const kernels avx512_kernels = {{AVX512_ENTRY(1), AVX512_ENTRY(2), AVX512_ENTRY(3),
                                        AVX512_ENTRY(4), AVX512_ENTRY(5), AVX512_ENTRY(6)},
                                       copy_rows_avx512, copy_cols_avx512};
#endif

/* Any CPU: one tile for every shape, left to the C compiler. */
static void tile_portable(int64_t kc, const float *a, int64_t ars, int64_t acs, const float *pb,
                          int64_t ldb, float *c, int64_t ldc, int rows, int nr, int overwrite) {
  int w = (nr + 15) / 16 * 16;
  float acc[MR][NR];
  memset(acc, 0, sizeof acc);
  for (int64_t kk = 0; kk < kc; ++kk) {
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < w; ++j)
        acc[r][j] += a[r * ars] * pb[j];
    a += acs;
    pb += ldb;
  }
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < nr; ++j)
      c[r * ldc + j] = overwrite ? acc[r][j] : c[r * ldc + j] + acc[r][j];
}

#define PORTABLE_TILE(R)                                                                      \
  static void tile_portable_##R(int64_t kc, const float *a, int64_t ars, int64_t acs,        \
                                const float *pb, int64_t ldb, float *c, int64_t ldc, int nr,  \
                                int overwrite) {                                             \
    tile_portable(kc, a, ars, acs, pb, ldb, c, ldc, R, nr, overwrite);                       \
  }
PORTABLE_TILE(1)
PORTABLE_TILE(2)
PORTABLE_TILE(3)
PORTABLE_TILE(4)
PORTABLE_TILE(5)
PORTABLE_TILE(6)
#define PORTABLE_ENTRY(R) {tile_portable_##R, tile_portable_##R, tile_portable_##R, tile_portable_##R}
static const kernels portable_kernels = {{PORTABLE_ENTRY(1), PORTABLE_ENTRY(2), PORTABLE_ENTRY(3),
                                          PORTABLE_ENTRY(4), PORTABLE_ENTRY(5), PORTABLE_ENTRY(6)},
                                         copy_rows_portable, copy_cols_portable};

static const kernels *choose_kernels(void) {
#ifdef HAVE_AVX512_KERNEL
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return &avx512_kernels;
#endif
  return &portable_kernels;
}

/* ---- tasks ---- */

/* Per thread, reused across calls: a packed panel of B, and A's rows of a row block. */
static _Thread_local float *packed_b, *packed_a;

static int ensure_buffer(void) {
  if (!packed_b)
    packed_b = aligned_alloc(64, (size_t)KC * NR * sizeof(float));
  if (!packed_a)
    packed_a = aligned_alloc(64, (size_t)ROW_BLOCK * KC * sizeof(float));
  return packed_b && packed_a;
}

/* One tile of C at (i, j): through a local tile when C's rows are not contiguous (a
 * transposed result). */
static void tile_at(const gemm_args *g, float *c, int64_t i, int64_t j, int rows, int nr,
                    int64_t kc, const float *pa, int64_t ars, int64_t acs, const float *pb,
                    int64_t ldb, int overwrite) {
  tile_fn tile = g->kern->tiles[rows - 1][(nr + 15) / 16 - 1];
  if (g->c_cs == 1) {
    tile(kc, pa, ars, acs, pb, ldb, c + i * g->c_rs + j, g->c_rs, nr, overwrite);
    return;
  }
  float local[MR * NR];
  tile(kc, pa, ars, acs, pb, ldb, local, NR, nr, 1);
  float *out = c + i * g->c_rs + j * g->c_cs;
  for (int r = 0; r < rows; ++r)
    for (int jj = 0; jj < nr; ++jj) {
      float *e = out + r * g->c_rs + jj * g->c_cs;
      *e = overwrite ? local[r * NR + jj] : *e + local[r * NR + jj];
    }
}

/* Rows r_begin..r_end (at most ROW_BLOCK): each 64-column panel of a K block of B meets
 * every row before the next; full panels of a row-major B are read in place, others
 * packed into the same 64 KiB. An A not read in place is packed once per K block. */
static void run_rows(const gemm_args *g, const float *a, const float *b, float *c,
                     int64_t r_begin, int64_t r_end, int64_t c_begin, int64_t c_end) {
  for (int64_t k0 = 0; k0 < g->k; k0 += g->kc) {
    int64_t kc = min64(g->kc, g->k - k0);
    int overwrite = k0 == 0 && !g->accumulate;
    int in_place = g->a_in_place;
    if (!in_place)
      for (int64_t i = r_begin; i < r_end; i += MR)
        pack_a(g, a, i, min64(MR, r_end - i), k0, kc, packed_a + (i - r_begin) * kc);
    for (int64_t j = c_begin; j < c_end; j += NR) {
      int nr = (int)min64(NR, c_end - j);
      const float *pb = b + k0 * g->b_rs + j;
      int64_t ldb = g->b_rs;
      if (g->b_cs != 1 || nr != NR) {
        pack_b(g, b, k0, kc, j, nr, packed_b);
        pb = packed_b, ldb = (nr + 15) / 16 * 16;
      }
      for (int64_t i = r_begin; i < r_end; i += MR) {
        int rows = (int)min64(MR, r_end - i);
        if (in_place)
          tile_at(g, c, i, j, rows, nr, kc, a + i * g->a_rs + k0 * g->a_cs, g->a_rs, g->a_cs,
                  pb, ldb, overwrite);
        else
          tile_at(g, c, i, j, rows, nr, kc, packed_a + (i - r_begin) * kc, 1, MR, pb, ldb,
                  overwrite);
      }
    }
  }
}

static void run_task(const gemm_args *g, int64_t task) {
  int64_t rc = task % g->row_chunks, rest = task / g->row_chunks;
  int64_t cc = rest % g->col_chunks, bi = rest / g->col_chunks;
  int64_t r_begin = rc * g->row_height, r_end = min64(g->m, r_begin + g->row_height);
  int64_t c_begin = cc * g->col_width, c_end = min64(g->n, c_begin + g->col_width);
  const float *a = g->a + bi * g->a_bs, *b = g->b + bi * g->b_bs;
  float *c = g->c + bi * g->c_bs;
  for (int64_t i = r_begin; i < r_end; i += ROW_BLOCK)
    run_rows(g, a, b, c, i, min64(r_end, i + ROW_BLOCK), c_begin, c_end);
}

/* ---- threads, through the OpenMP entry points of mlxc_parallel.c ---- */


typedef struct {
  const gemm_args *g;
  int64_t tasks;
} region_args;

static void region(int32_t *gtid, int32_t *btid, region_args *r) {
  (void)btid;
  if (!ensure_buffer())
    return; /* a worker without a buffer leaves its tasks to the caller, which has one */
  int32_t last = 0;
  int64_t lower = 0, upper = r->tasks - 1, stride = 1;
  __kmpc_for_static_init_8(NULL, *gtid, 34, &last, &lower, &upper, &stride, 1, 1);
  for (int64_t t = lower; t <= upper; ++t)
    run_task(r->g, t);
}

/* Without memory for the packing buffer: the plain triple loop. */
static void unpacked(const gemm_args *g) {
  for (int64_t bi = 0; bi < g->batch; ++bi)
    for (int64_t i = 0; i < g->m; ++i)
      for (int64_t j = 0; j < g->n; ++j) {
        const float *a = g->a + bi * g->a_bs + i * g->a_rs;
        const float *b = g->b + bi * g->b_bs + j * g->b_cs;
        float sum = 0.0f;
        for (int64_t kk = 0; kk < g->k; ++kk)
          sum += a[kk * g->a_cs] * b[kk * g->b_rs];
        float *e = g->c + bi * g->c_bs + i * g->c_rs + j * g->c_cs;
        *e = g->accumulate ? *e + sum : sum;
      }
}

/* How the product splits into tasks for `threads` threads (1: one task per batch entry
 * and column block). */
static void split(gemm_args *g, int threads) {
  int64_t panels = ceil_div(g->n, NR), row_panels = ceil_div(g->m, MR);
  int64_t col_chunks = ceil_div(g->n, NC), row_chunks = 1;
  if (threads > 1) {
    /* Twice as many tasks as threads, and more while each keeps TASK_WORK: a worker
     * that joins late (woken from sleep) or runs slowly still finds work, and the
     * caller waits for at most one small task. Columns split for free (A and B are
     * read in place, so nothing is done twice). */
    int64_t want = ceil_div(2 * (int64_t)threads, g->batch);
    int64_t by_work = (int64_t)((double)g->m * g->n * g->k / TASK_WORK);
    if (col_chunks < want || col_chunks < by_work)
      col_chunks = min64(want > by_work ? want : by_work, panels);
    if (col_chunks < want)
      row_chunks = min64(ceil_div(want, col_chunks),
                         row_panels * MR >= 2 * MIN_CHUNK_ROWS ? row_panels * MR / MIN_CHUNK_ROWS
                                                               : 1);
  }
  g->col_width = ceil_div(panels, col_chunks) * NR;
  g->col_chunks = ceil_div(g->n, g->col_width);
  g->row_height = ceil_div(row_panels, row_chunks) * MR;
  g->row_chunks = ceil_div(g->m, g->row_height);
}

MLXC_EXPORT void mlxc_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a,
                            int64_t a_bs, int64_t a_rs, int64_t a_cs, const float *b,
                            int64_t b_bs, int64_t b_rs, int64_t b_cs, float *c, int64_t c_bs,
                            int64_t c_rs, int64_t c_cs, int32_t threads, int32_t accumulate) {
  static const kernels *kern;
  if (!kern)
    kern = choose_kernels();
  if (batch <= 0 || m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    if (!accumulate)
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j)
            c[bi * c_bs + i * c_rs + j * c_cs] = 0.0f;
    return;
  }
  gemm_args g = {batch, m, n, k, a, b, c, a_bs, a_rs, a_cs, b_bs, b_rs, b_cs, c_bs, c_rs, c_cs,
                 accumulate, a_cs == 1 || a_rs == 1, ceil_div(k, ceil_div(k, KC)),
                 0, 0, 0, 0, kern};
  if (!ensure_buffer()) {
    unpacked(&g);
    return;
  }
  double work = (double)batch * m * n * k;
  if (threads < 1 || work < THREADED_WORK)
    threads = 1;
  split(&g, threads);
  region_args r = {&g, batch * g.col_chunks * g.row_chunks};
  if (threads == 1 || r.tasks == 1) {
    for (int64_t t = 0; t < r.tasks; ++t)
      run_task(&g, t);
    return;
  }
  __kmpc_push_num_threads(NULL, __kmpc_global_thread_num(NULL), threads);
  __kmpc_fork_call(NULL, 1, (microtask_t)region, &r);
}
