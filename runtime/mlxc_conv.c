/* f32 convolutions that generated code calls instead of compiling its own: see
 * mlxc_conv.h for why and for the contract.
 *
 * An implicit matrix product, as Eigen computes XLA's convolutions: rows are output
 * pixels, columns output channels, and the reduction runs over the KH*KW*C taps of a
 * pixel's patch. The filter (HWIO: already that reduction x channels, row-major) is
 * packed once per call into panels of 32 channels (16 for a last panel of at most 16).
 *
 * A pixel's patch is read in place: along a filter row, neighbouring taps are
 * contiguous in the NHWC input, so the patch is KH runs of KW*C values and the register
 * tile takes one pointer per run and pixel. Only a run that reaches into the padding
 * is copied, with zeros for the taps there (a run wholly in it reads a row of zeros),
 * so there is no padded input, and no gathered copy of the interior either: copying
 * every patch (an explicit im2col) cost a third of the arithmetic at 16 channels, and a
 * pointer per tap, as a direct convolution has, more than that.
 *
 * The register tile is 12 pixels by 32 channels (24 of the 32 AVX-512 registers), or
 * 12 x 16 for a panel of at most 16 channels: convolutions often have 16-64 output
 * channels, where mlxc_gemm's 64-wide tile would compute half its lanes for nothing.
 * Each input value is broadcast to its pixel's accumulators.
 *
 * Threads take blocks of 24 pixels from mlxc's pool through the same OpenMP entry
 * points generated code uses; all read one packed filter.
 */
#include <stdlib.h>
#include <string.h>

#include "mlxc_conv.h"
#include "mlxc_parallel.h"
#include "mlxc_window.h"

#define MR 12   /* pixels per register tile */
#define MB 24   /* pixels per gathered block: two tiles */
#define NR 32   /* channels per filter panel (16 for a last panel of at most 16) */
/* The reduction is split into blocks of whole taps of at most about KC values, evenly
 * (a last block of one tap would cost a pass over the output for little work). Up to
 * that, streaming the filter panel from L2 keeps up with the tile. */
#define KC 2048
/* The most values an edge pixel's window may span (blocks of fewer filter rows
 * otherwise). */
#define WINDOW (1 << 14)
/* Below this many multiply-adds a convolution runs on its caller alone. */
#define THREADED_WORK (1 << 20)

typedef struct {
  const float *in;
  float *out;
  const float *pb; /* the packed filter */
  int64_t n, h, w, c, kh, kw, f, oh, ow, sh, sw, dh, dw, pt, pl;
  int64_t m;    /* output pixels */
  int64_t k;    /* taps x channels: the reduction */
  int64_t taps; /* KH * KW */
  int64_t taps_per_block;
  int64_t window; /* the most values from a block's first tap to its last one's end */
  int64_t *plan;  /* each block of taps' runs (run_set), found once per call */
} conv_args;

/* ---- patches: the input in place, or windows gathered at the edges ---- */

/* Per thread, kept for later calls: the windows of edge pixels (their runs of taps
 * copied, with zeros for the taps in the padding, at the places they have in the
 * input), and a window of zeros (pixels past the end). */
typedef struct {
  char *data;
  size_t bytes;
} buffer;

static _Thread_local buffer scratch, zero_run, packed_filter;

static void *reserve(buffer *b, size_t bytes) {
  if (b->bytes >= bytes)
    return b->data;
  free(b->data);
  b->data = aligned_alloc(64, (bytes + 63) / 64 * 64);
  b->bytes = b->data ? bytes : 0;
  return b->data;
}

/* The taps of a block as runs that are contiguous in the input: neighbouring taps of
 * a filter row (one tap each when the columns are dilated). Run s is filter row i[s],
 * columns j0[s] .. j1[s], lens[s] values, offsets[s] values after the block's first
 * tap in the input (and in a window); `first` is that tap's offset from the pixel's
 * top left tap. */
typedef struct {
  int64_t runs, first;
  int64_t *i, *lens, *j0, *j1, *offsets;
} run_set;

static void runs_of(const conv_args *g, int64_t t0, int64_t t1, run_set *rs) {
  int64_t n = 0;
  for (int64_t t = t0; t < t1; ++n) {
    const int64_t i = t / g->kw, j = t % g->kw;
    int64_t end = g->kw < j + (t1 - t) ? g->kw : j + (t1 - t);
    if (g->dw != 1)
      end = j + 1;
    rs->i[n] = i;
    rs->j0[n] = j;
    rs->j1[n] = end;
    rs->lens[n] = (end - j) * g->c;
    rs->offsets[n] = (i * g->dh * g->w + j * g->dw) * g->c;
    t += end - j;
  }
  rs->runs = n;
  rs->first = rs->offsets[0];
  for (int64_t s = 0; s < n; ++s)
    rs->offsets[s] -= rs->first;
}

/* Values from tap t0 to the end of tap t1 - 1, in the input. */
static int64_t window_of(const conv_args *g, int64_t t0, int64_t t1) {
  const int64_t i0 = t0 / g->kw, j0 = t0 % g->kw, i1 = (t1 - 1) / g->kw, j1 = (t1 - 1) % g->kw;
  return ((i1 - i0) * g->dh * g->w + (j1 - j0) * g->dw) * g->c + g->c;
}

static size_t scratch_bytes(const conv_args *g) {
  return (size_t)MB * g->window * sizeof(float) + MB * sizeof(float *);
}

/* In g->plan, block kb's runs: their count, `first`, then five arrays of them. */
static int64_t plan_stride(const conv_args *g) { return 2 + 5 * g->taps_per_block; }

static run_set planned_runs(const conv_args *g, int64_t kb) {
  int64_t *p = g->plan + kb * plan_stride(g);
  const int64_t tpb = g->taps_per_block;
  run_set rs = {p[0], p[1], p + 2, p + 2 + tpb, p + 2 + 2 * tpb, p + 2 + 3 * tpb,
                p + 2 + 4 * tpb};
  return rs;
}

static void plan_runs(conv_args *g) {
  for (int64_t t0 = 0, kb = 0; t0 < g->taps; t0 += g->taps_per_block, ++kb) {
    run_set rs = planned_runs(g, kb);
    runs_of(g, t0, g->taps - t0 < g->taps_per_block ? g->taps : t0 + g->taps_per_block, &rs);
    g->plan[kb * plan_stride(g)] = rs.runs;
    g->plan[kb * plan_stride(g) + 1] = rs.first;
  }
}

/* A run of zeros, at least `floats` long, kept for later calls. */
static const float *zeros_for(size_t floats) {
  size_t had = zero_run.bytes / sizeof(float);
  float *z = reserve(&zero_run, floats * sizeof(float));
  if (z && zero_run.bytes / sizeof(float) != had)
    memset(z, 0, zero_run.bytes);
  return z;
}

/* ---- the register tile ---- */

/* C (mr x nr, rows ldc apart) += or = (overwrite) the patches of MR pixels times a
 * filter panel (16 * nv wide). Pixel r's run s is lens[s] values at a[r] + offs[s];
 * the panel's rows follow the runs in order. */
typedef void (*tile_fn)(int64_t runs, const int64_t *lens, const int64_t *offs,
                        const float *const *a, const float *pb, int nv, float *c, int64_t ldc,
                        int mr, int nr, int overwrite);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX512_KERNEL 1

static inline __attribute__((always_inline, target("avx512f"))) void
tile_body(int64_t runs, const int64_t *lens, const int64_t *offs, const float *const *base,
          const float *pb, float *c, int64_t ldc, int mr, int nr, int overwrite, const int nv) {
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = _mm512_setzero_ps();
    acc[r][1] = _mm512_setzero_ps();
  }
  const float *a[MR];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r)
    a[r] = base[r];
  const int64_t ldb = 16 * nv;
  for (int64_t s = 0; s < runs; ++s) {
    const int64_t end = offs[s] + lens[s];
    for (int64_t kk = offs[s]; kk < end; ++kk) {
      const __m512 b0 = _mm512_load_ps(pb);
      const __m512 b1 = nv == 2 ? _mm512_load_ps(pb + 16) : b0;
#pragma GCC unroll 12
      for (int r = 0; r < MR; ++r) {
        const __m512 av = _mm512_set1_ps(a[r][kk]);
        acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
        if (nv == 2)
          acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
      }
      pb += ldb;
    }
  }
  if (mr == MR && nr == 16 * nv) {
    /* A whole tile: stored straight from the registers. */
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
      for (int j = 0; j < nv; ++j) {
        float *p = c + r * ldc + 16 * j;
        _mm512_storeu_ps(p, overwrite ? acc[r][j] : _mm512_add_ps(_mm512_loadu_ps(p), acc[r][j]));
      }
    return;
  }
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < nv; ++j) {
      const int left = nr - 16 * j;
      if (left <= 0)
        break;
      const __mmask16 mask = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
      float *p = c + r * ldc + 16 * j;
      const __m512 v =
          overwrite ? acc[r][j] : _mm512_add_ps(_mm512_maskz_loadu_ps(mask, p), acc[r][j]);
      _mm512_mask_storeu_ps(p, mask, v);
    }
}

__attribute__((target("avx512f"))) static void tile_avx512(int64_t runs, const int64_t *lens,
                                                            const int64_t *offs,
                                                            const float *const *a,
                                                            const float *pb, int nv, float *c,
                                                            int64_t ldc, int mr, int nr,
                                                            int overwrite) {
  if (nv == 2)
    tile_body(runs, lens, offs, a, pb, c, ldc, mr, nr, overwrite, 2);
  else
    tile_body(runs, lens, offs, a, pb, c, ldc, mr, nr, overwrite, 1);
}

#endif

/* Any CPU: the same tile, left to the C compiler. */
static void tile_portable(int64_t runs, const int64_t *lens, const int64_t *offs,
                          const float *const *a, const float *pb, int nv, float *c,
                          int64_t ldc, int mr, int nr, int overwrite) {
  float acc[MR][NR];
  const int width = 16 * nv;
  memset(acc, 0, sizeof acc);
  for (int64_t s = 0; s < runs; ++s)
    for (int64_t kk = offs[s]; kk < offs[s] + lens[s]; ++kk) {
      for (int r = 0; r < MR; ++r)
        for (int j = 0; j < width; ++j)
          acc[r][j] += a[r][kk] * pb[j];
      pb += width;
    }
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < nr; ++j)
      c[r * ldc + j] = overwrite ? acc[r][j] : c[r * ldc + j] + acc[r][j];
}

static tile_fn tile;

static void choose_tile(void) {
#ifdef HAVE_AVX512_KERNEL
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    tile = tile_avx512;
    return;
  }
#endif
  tile = tile_portable;
}

/* The filter's element strides along its four dimensions (HWIO order): a transposed
 * filter (OIHW, say) is read in place. */
typedef struct {
  const float *data;
  int64_t h, w, i, o;
} filter_view;

/* The filter (K x F) as panels of NR channels (the last of 16 when at most 16 are
 * left), each K rows of its width, zero past F; panel p starts at p * K * NR. */
static void pack_filter(const conv_args *g, const filter_view *fv, float *out) {
  const int64_t k = g->k, f = g->f;
  for (int64_t c0 = 0; c0 < f; c0 += NR) {
    const int64_t width = f - c0 > 16 ? NR : 16;
    const int64_t cols = f - c0 < width ? f - c0 : width;
    float *row = out + c0 / NR * k * NR;
    for (int64_t i = 0; i < g->kh; ++i)
      for (int64_t j = 0; j < g->kw; ++j)
        for (int64_t ci = 0; ci < g->c; ++ci, row += width) {
          const float *src = fv->data + i * fv->h + j * fv->w + ci * fv->i + c0 * fv->o;
          if (fv->o == 1)
            memcpy(row, src, (size_t)cols * sizeof(float));
          else
            for (int64_t ch = 0; ch < cols; ++ch)
              row[ch] = src[ch * fv->o];
          for (int64_t ch = cols; ch < width; ++ch)
            row[ch] = 0.0f;
        }
  }
}

/* ---- tasks: blocks of MB pixels ---- */

typedef float v4 __attribute__((vector_size(16)));

/* Short copies inline: a call to memcpy per run cost more than the run. */
static inline void copy_floats(float *d, const float *s, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v16 x;
    memcpy(&x, s + i, sizeof x);
    memcpy(d + i, &x, sizeof x);
  }
  for (; i + 4 <= n; i += 4) {
    v4 x;
    memcpy(&x, s + i, sizeof x);
    memcpy(d + i, &x, sizeof x);
  }
  for (; i < n; ++i)
    d[i] = s[i];
}

static inline void zero_floats(float *d, int64_t n) {
  const v16 z = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    memcpy(d + i, &z, sizeof z);
  for (; i < n; ++i)
    d[i] = 0.0f;
}

/* The block's runs of taps of the pixel at column xx (its first filter row at input
 * row y0), copied into `window` at their places in the input, zeros for the taps in
 * the padding. */
static const float *edge_window(const conv_args *g, const run_set *rs, const float *image,
                                int64_t y0, int64_t xx, float *window) {
  const int64_t c = g->c, x0 = xx * g->sw - g->pl;
  for (int64_t s = 0; s < rs->runs; ++s) {
    const int64_t iy = y0 + rs->i[s] * g->dh, j0 = rs->j0[s], j1 = rs->j1[s];
    const int64_t xa = x0 + j0 * g->dw, xl = x0 + (j1 - 1) * g->dw;
    float *d = window + rs->offsets[s];
    if (iy < 0 || iy >= g->h || xl < 0 || xa >= g->w) {
      zero_floats(d, rs->lens[s]);
      continue;
    }
    /* The taps inside the input are j0 + lo .. j0 + hi (dw == 1 when there are several). */
    const int64_t lo = xa >= 0 ? 0 : g->dw == 1 ? -xa : (-xa + g->dw - 1) / g->dw;
    const int64_t hi = xl < g->w ? j1 - j0 : g->dw == 1 ? g->w - xa : (g->w - 1 - xa) / g->dw + 1;
    zero_floats(d, lo * c);
    copy_floats(d + lo * c, image + (iy * g->w + xa + lo * g->dw) * c, (hi - lo) * c);
    zero_floats(d + hi * c, (j1 - j0 - hi) * c);
  }
  return window;
}

/* Where the block's first tap of pixel m0 + r is, for r < MB: in the input when all
 * its taps lie inside it, else in a window at `windows` + r * g->window holding its
 * runs, with zeros for the taps in the padding (`zeros` for pixels past the end). */
static void pixel_bases(const conv_args *g, const run_set *rs, int64_t m0, int64_t rows,
                        const float **bases, const float *zeros, float *windows) {
  const int64_t c = g->c, per_image = g->oh * g->ow;
  /* Output columns whose taps all lie inside the input, along a row. */
  const int64_t x_lo = (g->pl + g->sw - 1) / g->sw;
  const int64_t x_hi_num = g->w - 1 - (g->kw - 1) * g->dw + g->pl;
  const int64_t x_hi = x_hi_num < 0 ? 0 : x_hi_num / g->sw + 1;
  int64_t b = m0 / per_image, y = m0 % per_image / g->ow, x = m0 % g->ow;
  for (int64_t r = 0; r < rows;) {
    const int64_t span = g->ow - x < rows - r ? g->ow - x : rows - r;
    const float *image = g->in + b * g->h * g->w * c;
    const int64_t y0 = y * g->sh - g->pt;
    int64_t a = x, e = x; /* the columns of the span with every tap inside */
    if (y0 >= 0 && y0 + (g->kh - 1) * g->dh < g->h) {
      a = x > x_lo ? x : x_lo;
      e = x + span < x_hi ? x + span : x_hi;
      if (e < a)
        a = e = x;
    }
    /* Most pixels: bases a fixed step apart. */
    const float *p = image + (y0 * g->w - g->pl) * c + rs->first;
    for (int64_t xx = a; xx < e; ++xx)
      bases[r + xx - x] = p + xx * g->sw * c;
    for (int64_t xx = x; xx < a; ++xx)
      bases[r + xx - x] = edge_window(g, rs, image, y0, xx, windows + (r + xx - x) * g->window);
    for (int64_t xx = e > a ? e : a; xx < x + span; ++xx)
      bases[r + xx - x] = edge_window(g, rs, image, y0, xx, windows + (r + xx - x) * g->window);
    r += span;
    x += span;
    if (x == g->ow) {
      x = 0;
      if (++y == g->oh) {
        y = 0;
        ++b;
      }
    }
  }
  for (int64_t r = rows; r < MB; ++r)
    bases[r] = zeros;
}

static void run_block(const conv_args *g, const float *zeros, void *memory, int64_t block) {
  const int64_t c = g->c, tpb = g->taps_per_block;
  float *windows = memory;
  const float **bases = (const float **)(windows + MB * g->window);
  const int64_t m0 = block * MB, rows = g->m - m0 < MB ? g->m - m0 : MB;
  for (int64_t t0 = 0, kb = 0; t0 < g->taps; t0 += tpb, ++kb) {
    const run_set rs = planned_runs(g, kb);
    pixel_bases(g, &rs, m0, rows, bases, zeros, windows);
    for (int64_t q = 0; q < rows; q += MR) {
      const int mr = (int)(rows - q < MR ? rows - q : MR);
      for (int64_t c0 = 0; c0 < g->f; c0 += NR) {
        const int64_t width = g->f - c0 > 16 ? NR : 16;
        const int nr = (int)(g->f - c0 < width ? g->f - c0 : width);
        const float *pb = g->pb + c0 / NR * g->k * NR + t0 * c * width;
        tile(rs.runs, rs.lens, rs.offsets, bases + q, pb, (int)(width / 16),
             g->out + (m0 + q) * g->f + c0, g->f, mr, nr, t0 == 0);
      }
    }
  }
}

/* ---- threads, through the OpenMP entry points of mlxc_parallel.c ---- */


typedef struct {
  const conv_args *g;
  int64_t blocks;
} region_args;

static void region(int32_t *gtid, int32_t *btid, region_args *r) {
  (void)btid;
  void *memory = reserve(&scratch, scratch_bytes(r->g));
  const float *zeros = zeros_for((size_t)r->g->window);
  if (!memory || !zeros)
    return; /* a worker without memory leaves its blocks to the caller, which has it */
  int32_t last = 0;
  int64_t lower = 0, upper = r->blocks - 1, stride = 1;
  __kmpc_for_static_init_8(NULL, *gtid, 34, &last, &lower, &upper, &stride, 1, 1);
  for (int64_t t = lower; t <= upper; ++t)
    run_block(r->g, zeros, memory, t);
}

/* Without memory for the buffers: the plain loops. */
static void unpacked(const conv_args *g, const filter_view *fv) {
  for (int64_t m = 0; m < g->m; ++m) {
    const int64_t b = m / (g->oh * g->ow), y = m / g->ow % g->oh, x = m % g->ow;
    float *o = g->out + m * g->f;
    for (int64_t ch = 0; ch < g->f; ++ch)
      o[ch] = 0.0f;
    for (int64_t i = 0; i < g->kh; ++i) {
      const int64_t iy = y * g->sh + i * g->dh - g->pt;
      if (iy < 0 || iy >= g->h)
        continue;
      for (int64_t j = 0; j < g->kw; ++j) {
        const int64_t ix = x * g->sw + j * g->dw - g->pl;
        if (ix < 0 || ix >= g->w)
          continue;
        const float *s = g->in + ((b * g->h + iy) * g->w + ix) * g->c;
        const float *wt = fv->data + i * fv->h + j * fv->w;
        for (int64_t ci = 0; ci < g->c; ++ci)
          for (int64_t ch = 0; ch < g->f; ++ch)
            o[ch] += s[ci] * wt[ci * fv->i + ch * fv->o];
      }
    }
  }
}

MLXC_EXPORT void mlxc_sconv(const float *in, const float *filter, float *out, int64_t n,
                            int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,
                            int64_t f, int64_t oh, int64_t ow, int64_t stride_h,
                            int64_t stride_w, int64_t dil_h, int64_t dil_w, int64_t pad_top,
                            int64_t pad_left, int64_t filter_stride_h,
                            int64_t filter_stride_w, int64_t filter_stride_i,
                            int64_t filter_stride_o, int32_t threads) {
  const filter_view fv = {filter, filter_stride_h, filter_stride_w, filter_stride_i,
                          filter_stride_o};
  if (!tile)
    choose_tile();
  const int64_t m = n * oh * ow;
  if (m <= 0 || f <= 0)
    return;
  conv_args g = {in, out, NULL, n, h, w, c, kh, kw, f, oh, ow, stride_h, stride_w, dil_h,
                 dil_w, pad_top, pad_left, m, kh * kw * c, kh * kw, 1, 0, NULL};
  if (g.k <= 0) {
    memset(out, 0, (size_t)(m * f) * sizeof(float));
    return;
  }
  int64_t k_blocks = (g.k + KC - 1) / KC;
  g.taps_per_block = (g.taps + k_blocks - 1) / k_blocks;
  if (window_of(&g, 0, g.taps_per_block) > WINDOW && g.taps_per_block > kw) {
    /* Edge pixels' windows would be large (a wide image): blocks of whole filter rows,
     * as many as fit. */
    int64_t rows = (WINDOW - kw * dil_w * c) / (dil_h * w * c) + 1;
    rows = rows < 1 ? 1 : rows;
    k_blocks = (kh + rows - 1) / rows;
    g.taps_per_block = (kh + k_blocks - 1) / k_blocks * kw;
  }
  if ((kw - 1) * dil_w + 1 > dil_h * w && kh > 1) {
    /* A filter wider than the input (it reaches into padding on both sides): a filter
     * row's run would overlap the next row's in a window, so blocks of one row. */
    g.taps_per_block = kw;
  }
  for (int64_t t0 = 0; t0 < g.taps; t0 += g.taps_per_block) {
    const int64_t t1 = g.taps - t0 < g.taps_per_block ? g.taps : t0 + g.taps_per_block;
    const int64_t span = window_of(&g, t0, t1);
    g.window = span > g.window ? span : g.window;
  }
  g.window = (g.window + 15) / 16 * 16; /* windows 64-byte aligned */
  const int64_t panels = (f + NR - 1) / NR, k_blocks_now = (g.taps + g.taps_per_block - 1) /
                                                             g.taps_per_block;
  float *pb = reserve(&packed_filter, (size_t)(panels * g.k * NR) * sizeof(float) +
                                          (size_t)(k_blocks_now * plan_stride(&g)) *
                                              sizeof(int64_t));
  void *memory = reserve(&scratch, scratch_bytes(&g));
  const float *zeros = zeros_for((size_t)g.window);
  if (!pb || !memory || !zeros) {
    unpacked(&g, &fv);
    return;
  }
  pack_filter(&g, &fv, pb);
  g.pb = pb;
  g.plan = (int64_t *)(pb + panels * g.k * NR);
  plan_runs(&g);
  region_args r = {&g, (m + MB - 1) / MB};
  if (threads < 1 || (double)m * f * g.k < THREADED_WORK || r.blocks < 2)
    threads = 1;
  if (threads == 1) {
    for (int64_t t = 0; t < r.blocks; ++t)
      run_block(&g, zeros, memory, t);
    return;
  }
  __kmpc_push_num_threads(NULL, __kmpc_global_thread_num(NULL), threads);
  __kmpc_fork_call(NULL, 1, (microtask_t)region, &r);
}

/* ---- depthwise convolutions: one filter per channel ---- */

/* Each output channel reads only its own input channel, so there is no reduction over
 * channels to share: a pixel costs KH*KW multiply-adds per channel, and the kernel is
 * bound by reading the input. Channels are the vector lanes (16 at a time) and 8
 * pixels of a row share each filter vector; taps in the padding are skipped, rows of
 * them per output row and columns at the row's ends (pixels there one at a time).
 * Skipping adds nothing that 0 * w would not, unless a weight is infinite or NaN: then
 * (a check of the filter per call) every tap is computed, padding as zeros, as XLA
 * does with its padded input, to the same NaN. */

typedef struct {
  const float *in, *filter;
  float *out;
  int64_t n, h, w, c, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl;
} depthwise_args;

#define DW_PIXELS 8


/* Output rows r0 .. r1 (flat over batch x height). */
static inline __attribute__((always_inline)) void depthwise_rows(const depthwise_args *g,
                                                                 int64_t r0, int64_t r1) {
  const int64_t c = g->c, c16 = c / 16 * 16;
  const int64_t x_lo = (g->pl + g->sw - 1) / g->sw;
  const int64_t x_hi_num = g->w - 1 - (g->kw - 1) * g->dw + g->pl;
  const int64_t x_hi = x_hi_num < 0 ? 0 : x_hi_num / g->sw + 1;
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / g->oh, y = row % g->oh, y0 = y * g->sh - g->pt;
    const float *image = g->in + b * g->h * g->w * c;
    float *out = g->out + row * g->ow * c;
    /* The filter rows whose input row exists. */
    int64_t i_lo, i_hi;
    mlxc_taps_inside(y0, g->dh, g->kh, g->h, &i_lo, &i_hi);
    for (int64_t x = 0; x < g->ow;) {
      const int64_t x0 = x * g->sw - g->pl;
      if (x >= x_lo && x + DW_PIXELS <= x_hi) {
        /* DW_PIXELS pixels whose taps all lie inside the row. */
        for (int64_t c0 = 0; c0 < c16; c0 += 16) {
          v16 acc[DW_PIXELS] = {{0}};
          for (int64_t i = i_lo; i < i_hi; ++i) {
            const float *src = image + ((y0 + i * g->dh) * g->w + x0) * c + c0;
            const float *f = g->filter + i * g->kw * c + c0;
            for (int64_t j = 0; j < g->kw; ++j) {
              const v16 fv = load16(f + j * c);
              const float *s = src + j * g->dw * c;
#pragma GCC unroll 8
              for (int p = 0; p < DW_PIXELS; ++p)
                acc[p] += load16(s + p * g->sw * c) * fv;
            }
          }
#pragma GCC unroll 8
          for (int p = 0; p < DW_PIXELS; ++p)
            store16(out + (x + p) * c + c0, acc[p]);
        }
        for (int64_t ch = c16; ch < c; ++ch)
          for (int p = 0; p < DW_PIXELS; ++p) {
            float sum = 0.0f;
            for (int64_t i = i_lo; i < i_hi; ++i)
              for (int64_t j = 0; j < g->kw; ++j)
                sum += image[((y0 + i * g->dh) * g->w + x0 + p * g->sw + j * g->dw) * c + ch] *
                       g->filter[(i * g->kw + j) * c + ch];
            out[(x + p) * c + ch] = sum;
          }
        x += DW_PIXELS;
        continue;
      }
      /* One pixel, skipping the columns in the padding. */
      int64_t j_lo, j_hi;
      mlxc_taps_inside(x0, g->dw, g->kw, g->w, &j_lo, &j_hi);
      for (int64_t c0 = 0; c0 < c16; c0 += 16) {
        v16 acc = {0};
        for (int64_t i = i_lo; i < i_hi; ++i)
          for (int64_t j = j_lo; j < j_hi; ++j)
            acc += load16(image + ((y0 + i * g->dh) * g->w + x0 + j * g->dw) * c + c0) *
                   load16(g->filter + (i * g->kw + j) * c + c0);
        store16(out + x * c + c0, acc);
      }
      for (int64_t ch = c16; ch < c; ++ch) {
        float sum = 0.0f;
        for (int64_t i = i_lo; i < i_hi; ++i)
          for (int64_t j = j_lo; j < j_hi; ++j)
            sum += image[((y0 + i * g->dh) * g->w + x0 + j * g->dw) * c + ch] *
                   g->filter[(i * g->kw + j) * c + ch];
        out[x * c + ch] = sum;
      }
      ++x;
    }
  }
}

#ifdef HAVE_AVX512_KERNEL
__attribute__((target("avx512f,fma"))) static void depthwise_avx512(const depthwise_args *g,
                                                                     int64_t r0, int64_t r1) {
  depthwise_rows(g, r0, r1);
}
#endif

static void depthwise_portable(const depthwise_args *g, int64_t r0, int64_t r1) {
  depthwise_rows(g, r0, r1);
}

/* Every tap of rows r0 .. r1, the padding as zeros (for filters with infinities or NaN). */
static void depthwise_every_tap(const depthwise_args *g, int64_t r0, int64_t r1) {
  const int64_t c = g->c;
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / g->oh, y0 = row % g->oh * g->sh - g->pt;
    for (int64_t x = 0; x < g->ow; ++x) {
      float *out = g->out + (row * g->ow + x) * c;
      for (int64_t ch = 0; ch < c; ++ch)
        out[ch] = 0.0f;
      for (int64_t i = 0; i < g->kh; ++i)
        for (int64_t j = 0; j < g->kw; ++j) {
          const int64_t iy = y0 + i * g->dh, ix = x * g->sw - g->pl + j * g->dw;
          const int inside = iy >= 0 && iy < g->h && ix >= 0 && ix < g->w;
          const float *in = g->in + ((b * g->h + iy) * g->w + ix) * c;
          const float *wt = g->filter + (i * g->kw + j) * c;
          for (int64_t ch = 0; ch < c; ++ch)
            out[ch] += (inside ? in[ch] : 0.0f) * wt[ch];
        }
    }
  }
}

typedef void (*depthwise_fn)(const depthwise_args *, int64_t, int64_t);
static depthwise_fn depthwise;

typedef struct {
  const depthwise_args *g;
  int64_t rows;
  depthwise_fn fn;
} depthwise_region_args;

static void depthwise_range(const void *ctx, int64_t begin, int64_t end) {
  const depthwise_region_args *r = ctx;
  r->fn(r->g, begin, end);
}

MLXC_EXPORT void mlxc_sconv_depthwise(const float *in, const float *filter, float *out,
                                      int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh,
                                      int64_t kw, int64_t oh, int64_t ow, int64_t stride_h,
                                      int64_t stride_w, int64_t dil_h, int64_t dil_w,
                                      int64_t pad_top, int64_t pad_left, int32_t threads) {
  if (!depthwise) {
    depthwise = depthwise_portable;
#ifdef HAVE_AVX512_KERNEL
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      depthwise = depthwise_avx512;
#endif
  }
  const depthwise_args g = {in, filter, out, n, h, w, c, kh, kw, oh, ow,
                            stride_h, stride_w, dil_h, dil_w, pad_top, pad_left};
  depthwise_region_args r = {&g, n * oh, depthwise};
  if (r.rows <= 0 || ow <= 0 || c <= 0)
    return;
  for (int64_t k = 0; k < kh * kw * c; ++k)
    if (filter[k] - filter[k] != 0.0f) { /* infinite or NaN */
      r.fn = depthwise_every_tap;
      break;
    }
  if (threads < 1 || (double)r.rows * ow * c * kh * kw < THREADED_WORK || r.rows < 2)
    threads = 1;
  mlxc_parallel_range(r.rows, threads, depthwise_range, &r);
}
