/* f32 matrix products that generated code calls instead of compiling its own: see
 * mlxc_gemm.h for why and for the contract.
 *
 * The classic blocked product: a KC x NC block of B is packed into 64-column panels
 * (contiguous, so the kernel reads it as a stream and the prefetcher keeps up, where
 * B's rows are 4 KiB apart in a 1024-wide matrix), then for each MC x KC block of A,
 * packed into 6-row panels, a 6x64 register tile of C (24 of the 32 AVX-512
 * registers) accumulates a whole KC-long reduction before it is added into C. Both
 * packings read A and B through their strides, so transposed operands cost nothing.
 *
 * Threads take tasks of (batch, column block, row chunk) from mlxc's pool through the
 * same OpenMP entry points generated code uses; each task packs its own B block.
 */
#include <stdlib.h>
#include <string.h>

#include "mlxc_gemm.h"

#define MR 6
#define NR 64
#define KC 256
#define MC 96
#define NC 512
/* Below this many multiply-adds a product runs on its caller alone (waking a worker
 * costs a few microseconds). */
#define THREADED_WORK (1 << 20)

typedef struct {
  int64_t batch, m, n, k;
  const float *a, *b;
  float *c;
  int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs, c_bs, c_rs, c_cs;
  int accumulate;
  int64_t col_width, col_blocks, row_chunks, chunk_rows;
} gemm_args;

/* ---- packing (plain C: it moves memory, the compiler vectorizes the copies) ---- */

/* rows x cols of A from (r0, k0) into panels of MR rows: panel p holds, for each k,
 * MR consecutive values; rows past the end are zeros. */
static void pack_a(const gemm_args *g, const float *a, int64_t r0, int64_t rows, int64_t k0,
                   int64_t cols, float *out) {
  for (int64_t p = 0; p < rows; p += MR) {
    int64_t mr = rows - p < MR ? rows - p : MR;
    const float *src = a + (r0 + p) * g->a_rs + k0 * g->a_cs;
    for (int64_t kk = 0; kk < cols; ++kk) {
      const float *s = src + kk * g->a_cs;
      int64_t r = 0;
      for (; r < mr; ++r)
        out[r] = s[r * g->a_rs];
      for (; r < MR; ++r)
        out[r] = 0.0f;
      out += MR;
    }
  }
}

/* rows (k) x cols (n) of B from (k0, c0) into panels of NR columns, zero-padded. */
static void pack_b(const gemm_args *g, const float *b, int64_t k0, int64_t rows, int64_t c0,
                   int64_t cols, float *out) {
  for (int64_t p = 0; p < cols; p += NR) {
    int64_t nr = cols - p < NR ? cols - p : NR;
    const float *src = b + k0 * g->b_rs + (c0 + p) * g->b_cs;
    for (int64_t kk = 0; kk < rows; ++kk) {
      const float *s = src + kk * g->b_rs;
      if (g->b_cs == 1 && nr == NR) {
        memcpy(out, s, NR * sizeof(float));
      } else {
        int64_t j = 0;
        for (; j < nr; ++j)
          out[j] = s[j * g->b_cs];
        for (; j < NR; ++j)
          out[j] = 0.0f;
      }
      out += NR;
    }
  }
}

/* ---- the register tile ---- */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX512_KERNEL 1

/* C (mr x nr, rows ldc apart) += or = (overwrite) the product of a packed A panel and a
 * packed B panel over kc. */
__attribute__((target("avx512f"))) static void tile_avx512(int64_t kc, const float *pa,
                                                            const float *pb, float *c,
                                                            int64_t ldc, int mr, int nr,
                                                            int overwrite) {
  __m512 acc[MR][4];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
      acc[r][j] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < kc; ++kk) {
    __m512 b0 = _mm512_load_ps(pb), b1 = _mm512_load_ps(pb + 16);
    __m512 b2 = _mm512_load_ps(pb + 32), b3 = _mm512_load_ps(pb + 48);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      __m512 av = _mm512_set1_ps(pa[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(av, b2, acc[r][2]);
      acc[r][3] = _mm512_fmadd_ps(av, b3, acc[r][3]);
    }
    pa += MR;
    pb += NR;
  }
  if (mr == MR && nr == NR) {
    if (overwrite) {
#pragma GCC unroll 6
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j)
          _mm512_storeu_ps(c + r * ldc + 16 * j, acc[r][j]);
      return;
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        float *p = c + r * ldc + 16 * j;
        _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), acc[r][j]));
      }
    return;
  }
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < 4; ++j) {
      int left = nr - 16 * j;
      if (left <= 0)
        break;
      __mmask16 mask = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
      float *p = c + r * ldc + 16 * j;
      __m512 v = overwrite ? acc[r][j] : _mm512_add_ps(_mm512_maskz_loadu_ps(mask, p), acc[r][j]);
      _mm512_mask_storeu_ps(p, mask, v);
    }
}

#endif

/* Any CPU: the same tile, left to the C compiler. */
static void tile_portable(int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc,
                          int mr, int nr, int overwrite) {
  float acc[MR][NR];
  memset(acc, 0, sizeof acc);
  for (int64_t kk = 0; kk < kc; ++kk) {
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j)
        acc[r][j] += pa[r] * pb[j];
    pa += MR;
    pb += NR;
  }
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < nr; ++j)
      c[r * ldc + j] = overwrite ? acc[r][j] : c[r * ldc + j] + acc[r][j];
}

typedef void (*tile_fn)(int64_t, const float *, const float *, float *, int64_t, int, int, int);

static tile_fn choose_tile(void) {
#ifdef HAVE_AVX512_KERNEL
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return tile_avx512;
#endif
  return tile_portable;
}

/* ---- tasks ---- */

/* Per thread, reused across calls: a packed block of A and one of B. */
static _Thread_local float *packed_a, *packed_b;

static int ensure_buffers(void) {
  if (!packed_a)
    packed_a = aligned_alloc(64, (size_t)MC * KC * sizeof(float));
  if (!packed_b)
    packed_b = aligned_alloc(64, (size_t)KC * NC * sizeof(float));
  return packed_a && packed_b;
}

static void run_task(const gemm_args *g, tile_fn tile, int64_t task) {
  int64_t chunk = task % g->row_chunks;
  int64_t rest = task / g->row_chunks;
  int64_t jb = rest % g->col_blocks, bi = rest / g->col_blocks;
  int64_t c0 = jb * g->col_width, cols = g->n - c0 < g->col_width ? g->n - c0 : g->col_width;
  int64_t r_begin = chunk * g->chunk_rows;
  int64_t r_end = r_begin + g->chunk_rows < g->m ? r_begin + g->chunk_rows : g->m;
  const float *a = g->a + bi * g->a_bs, *b = g->b + bi * g->b_bs;
  float *c = g->c + bi * g->c_bs;
  for (int64_t k0 = 0; k0 < g->k; k0 += KC) {
    int64_t kc = g->k - k0 < KC ? g->k - k0 : KC;
    pack_b(g, b, k0, kc, c0, cols, packed_b);
    for (int64_t r0 = r_begin; r0 < r_end; r0 += MC) {
      int64_t rows = r_end - r0 < MC ? r_end - r0 : MC;
      pack_a(g, a, r0, rows, k0, kc, packed_a);
      for (int64_t p = 0; p < cols; p += NR) {
        int nr = (int)(cols - p < NR ? cols - p : NR);
        const float *pb = packed_b + (p / NR) * kc * NR;
        for (int64_t q = 0; q < rows; q += MR) {
          int mr = (int)(rows - q < MR ? rows - q : MR);
          const float *pa = packed_a + (q / MR) * kc * MR;
          int overwrite = k0 == 0 && !g->accumulate;
          if (g->c_cs == 1) {
            tile(kc, pa, pb, c + (r0 + q) * g->c_rs + c0 + p, g->c_rs, mr, nr, overwrite);
            continue;
          }
          /* C's rows are not contiguous (a transposed result): through a local tile. */
          float local[MR * NR];
          tile(kc, pa, pb, local, NR, mr, nr, 1);
          float *out = c + (r0 + q) * g->c_rs + (c0 + p) * g->c_cs;
          for (int r = 0; r < mr; ++r)
            for (int j = 0; j < nr; ++j) {
              float *e = out + r * g->c_rs + j * g->c_cs;
              *e = overwrite ? local[r * NR + j] : *e + local[r * NR + j];
            }
        }
      }
    }
  }
}

/* ---- threads, through the OpenMP entry points of mlxc_parallel.c ---- */

typedef struct ident ident_t;
typedef void (*microtask_t)(int32_t *gtid, int32_t *btid, ...);
void __kmpc_fork_call(ident_t *loc, int32_t argc, microtask_t fn, ...);
void __kmpc_push_num_threads(ident_t *loc, int32_t gtid, int32_t n);
int32_t __kmpc_global_thread_num(ident_t *loc);
void __kmpc_for_static_init_8(ident_t *loc, int32_t gtid, int32_t sched, int32_t *last,
                              int64_t *lower, int64_t *upper, int64_t *stride, int64_t incr,
                              int64_t chunk);

typedef struct {
  const gemm_args *g;
  tile_fn tile;
  int64_t tasks;
} region_args;

static void region(int32_t *gtid, int32_t *btid, region_args *r) {
  (void)btid;
  if (!ensure_buffers())
    return; /* a worker without buffers leaves its tasks to the caller, which has them */
  int32_t last = 0;
  int64_t lower = 0, upper = r->tasks - 1, stride = 1;
  __kmpc_for_static_init_8(NULL, *gtid, 34, &last, &lower, &upper, &stride, 1, 1);
  for (int64_t t = lower; t <= upper; ++t)
    run_task(r->g, r->tile, t);
}

/* Without memory for the packing buffers: the plain triple loop. */
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

MLXC_EXPORT void mlxc_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a,
                            int64_t a_bs, int64_t a_rs, int64_t a_cs, const float *b,
                            int64_t b_bs, int64_t b_rs, int64_t b_cs, float *c, int64_t c_bs,
                            int64_t c_rs, int64_t c_cs, int32_t threads, int32_t accumulate) {
  static tile_fn tile;
  if (!tile)
    tile = choose_tile();
  if (batch <= 0 || m <= 0 || n <= 0)
    return;
  gemm_args g = {batch, m, n, k, a, b, c, a_bs, a_rs, a_cs, b_bs, b_rs, b_cs, c_bs, c_rs, c_cs,
                 accumulate, NC, (n + NC - 1) / NC, 1, m};
  if (k <= 0) {
    if (!accumulate)
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j)
            c[bi * c_bs + i * c_rs + j * c_cs] = 0.0f;
    return;
  }
  double work = (double)batch * m * n * k;
  if (threads < 1 || work < THREADED_WORK)
    threads = 1;
  /* Enough tasks for every thread twice over, when the batch and column blocks alone
   * are too few: narrower column blocks for a product of few rows (each task packs
   * only its part of B), else chunks of rows (a whole number of MR-row panels; each
   * task packs the same B block, paid back over many rows). */
  int64_t outer = batch * g.col_blocks;
  if (threads > 1 && outer < 2 * threads && m < 2 * MC && n > NR) {
    int64_t want = (2 * threads + batch - 1) / batch;
    int64_t width = (n + want - 1) / want;
    g.col_width = (width + NR - 1) / NR * NR;
    g.col_blocks = (n + g.col_width - 1) / g.col_width;
    outer = batch * g.col_blocks;
  }
  if (threads > 1 && outer < 2 * threads) {
    int64_t want = (2 * threads + outer - 1) / outer;
    int64_t panels = (m + MR - 1) / MR;
    if (want > panels)
      want = panels;
    int64_t per = (panels + want - 1) / want;
    g.chunk_rows = per * MR;
    g.row_chunks = (m + g.chunk_rows - 1) / g.chunk_rows;
  }
  if (!ensure_buffers()) {
    unpacked(&g);
    return;
  }
  region_args r = {&g, tile, outer * g.row_chunks};
  if (threads == 1) {
    for (int64_t t = 0; t < r.tasks; ++t)
      run_task(&g, tile, t);
    return;
  }
  __kmpc_push_num_threads(NULL, __kmpc_global_thread_num(NULL), threads);
  __kmpc_fork_call(NULL, 1, (microtask_t)region, &r);
}
