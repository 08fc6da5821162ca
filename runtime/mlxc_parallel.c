/* mlxc's thread pool and the part of the OpenMP runtime ABI that LLVM's OpenMP IR
 * builder calls for the `omp.parallel` + `omp.wsloop` regions mlxc emits (see
 * mlxc_parallel.h).
 *
 * One persistent pool of workers; a region wakes them and its calling thread works
 * too. Iterations are handed out in blocks from a shared counter, each thread running
 * the outlined region again for as long as blocks remain, so a worker that the OS has
 * not scheduled yet (the machine is shared) delays nothing: the others take its
 * blocks, and the region closes without waiting for threads that never joined it.
 * Workers spin briefly before sleeping on a condition variable, so regions that
 * follow each other closely (the ops of one program) pay no wake-up.
 *
 * A region started inside a region, or while another thread owns the pool (an
 * executable called from several Python threads), runs inline on its caller. Each
 * region asks for its program's thread count (MLXC_THREADS when it was compiled,
 * through `__kmpc_push_num_threads`); the pool grows to the largest count asked.
 *
 * mlxc's regions hold exactly one worksharing loop and nothing else, which is what
 * makes re-running the outlined region to take another block correct, and the join
 * at the region's end the only barrier needed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "mlxc_parallel.h"

#define MAX_THREADS 256
#define MAX_ARGS 16
#define SPIN_ROUNDS 400       /* ~10 us of `pause` before a worker sleeps */
#define BLOCKS_PER_THREAD 4   /* finer blocks balance threads that start late */
#define CLOSED (1 << 30)      /* in pool.active: the region takes no more threads */


static struct {
  pthread_mutex_t lock; /* guards sleeping, worker start-up and the condition variables */
  pthread_cond_t wake;
  pthread_cond_t done;
  pthread_mutex_t owner; /* held by the thread whose region uses the pool */
  int started;           /* workers created so far */
  int sleeping;
  atomic_uint_fast64_t generation; /* bumped to hand the workers a new region */
  atomic_int active;               /* workers inside the region, | CLOSED once it ends */
  atomic_int_fast64_t next;        /* the next unclaimed iteration of the region's loop */
  int team;                        /* threads the region may use, caller included */
  microtask_t fn;
  int argc;
  void *args[MAX_ARGS];
  atomic_int_fast64_t pool_runs;
  atomic_int_fast64_t worker_blocks;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER, .owner = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int32_t my_tid;         /* index in the current region */
static _Thread_local int32_t my_team = 1;    /* 1: the region runs inline, whole */
static _Thread_local int in_region;
static _Thread_local int claimed;            /* the last static_init handed out a block */
static _Thread_local int32_t pushed_threads; /* __kmpc_push_num_threads, for the next region */

/* Whether this thread runs a parallel region (mlxc_alloc.c cannot unwind out of one). */
int mlxc_in_parallel_region(void) { return in_region; }

/* A region without a thread count (not one mlxc emits) uses every online CPU. */
static int default_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

MLXC_EXPORT void mlxc_parallel_stats(int64_t counts[2]) {
  counts[0] = atomic_load(&pool.pool_runs);
  counts[1] = atomic_load(&pool.worker_blocks);
}

static void call_microtask(microtask_t fn, int32_t tid, int argc, void **a) {
  int32_t gtid = tid, btid = tid;
  /* The IR builder passes its captures in one struct (argc == 1); the other arities
   * are here for code that passes them one by one. */
  switch (argc) {
  case 0: fn(&gtid, &btid); break;
  case 1: fn(&gtid, &btid, a[0]); break;
  case 2: fn(&gtid, &btid, a[0], a[1]); break;
  case 3: fn(&gtid, &btid, a[0], a[1], a[2]); break;
  case 4: fn(&gtid, &btid, a[0], a[1], a[2], a[3]); break;
  default:
    fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
       a[11], a[12], a[13], a[14], a[15]);
  }
}

/* Run the region's outlined body until the loop has no block left. */
static void take_blocks(int32_t tid, int32_t team) {
  my_tid = tid;
  my_team = team;
  in_region = 1;
  int64_t blocks = 0;
  do {
    claimed = 0;
    call_microtask(pool.fn, tid, pool.argc, pool.args);
    blocks += claimed;
  } while (claimed);
  if (tid > 0)
    atomic_fetch_add_explicit(&pool.worker_blocks, blocks, memory_order_relaxed);
  in_region = 0;
  my_tid = 0;
  my_team = 1;
}

typedef struct {
  int32_t index;      /* 1 .. started */
  uint_fast64_t seen; /* the generation when it was created: the next one is its first */
} worker_start;

static void *worker_main(void *arg) {
  worker_start start = *(worker_start *)arg;
  free(arg);
  int32_t index = start.index;
  uint_fast64_t seen = start.seen;
  for (;;) {
    int spins = 0;
    while (atomic_load_explicit(&pool.generation, memory_order_acquire) == seen) {
      if (++spins < SPIN_ROUNDS) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        continue;
      }
      pthread_mutex_lock(&pool.lock);
      pool.sleeping++;
      while (atomic_load(&pool.generation) == seen)
        pthread_cond_wait(&pool.wake, &pool.lock);
      pool.sleeping--;
      pthread_mutex_unlock(&pool.lock);
    }
    seen = atomic_load_explicit(&pool.generation, memory_order_acquire);
    /* Join unless the region has already ended (its caller took every block). While
     * joined, the region cannot end: its fields stay this generation's. A newer
     * generation than `seen` is a region this thread has yet to wake for. */
    int prev = atomic_fetch_add_explicit(&pool.active, 1, memory_order_acq_rel);
    if (!(prev & CLOSED) &&
        atomic_load_explicit(&pool.generation, memory_order_acquire) == seen && index < pool.team)
      take_blocks(index, pool.team);
    /* The closing caller may be waiting for this count, even for a join refused above. */
    if (atomic_fetch_sub_explicit(&pool.active, 1, memory_order_acq_rel) == (CLOSED | 1)) {
      pthread_mutex_lock(&pool.lock);
      pthread_cond_signal(&pool.done);
      pthread_mutex_unlock(&pool.lock);
    }
  }
  return NULL;
}

/* Workers 1 .. want-1 exist afterwards (as many as could be created). */
static int ensure_workers(int want) {
  pthread_mutex_lock(&pool.lock);
  while (pool.started < want - 1) {
    pthread_t t;
    pthread_attr_t attr;
    worker_start *start = malloc(sizeof *start);
    if (!start)
      break;
    start->index = pool.started + 1;
    start->seen = atomic_load(&pool.generation);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* Generated code keeps its tiles' temporaries on the stack. */
    pthread_attr_setstacksize(&attr, 8u << 20);
    int failed = pthread_create(&t, &attr, worker_main, start);
    pthread_attr_destroy(&attr);
    if (failed) {
      free(start);
      break;
    }
    pool.started++;
  }
  int have = pool.started + 1;
  pthread_mutex_unlock(&pool.lock);
  return have < want ? have : want;
}

static void run_inline(microtask_t fn, int argc, void **args) {
  int32_t saved_tid = my_tid, saved_team = my_team, saved_in = in_region;
  my_tid = 0;
  my_team = 1;
  in_region = 1;
  call_microtask(fn, 0, argc, args);
  my_tid = saved_tid;
  my_team = saved_team;
  in_region = saved_in;
}

static void run_region(microtask_t fn, int argc, void **args) {
  int want = pushed_threads > 0 ? pushed_threads : default_threads();
  pushed_threads = 0;
  if (want > MAX_THREADS)
    want = MAX_THREADS;
  if (in_region || want < 2 || pthread_mutex_trylock(&pool.owner) != 0) {
    run_inline(fn, argc, args);
    return;
  }
  int team = ensure_workers(want);
  if (team < 2) {
    pthread_mutex_unlock(&pool.owner);
    run_inline(fn, argc, args);
    return;
  }
  /* No worker is inside a region now: the last one ended with only late counts left. */
  pool.fn = fn;
  pool.argc = argc;
  for (int i = 0; i < argc && i < MAX_ARGS; ++i)
    pool.args[i] = args[i];
  pool.team = team;
  atomic_store(&pool.next, 0);
  /* Open the region. Cleared, not reset: a worker late for an older region may still
   * hold a count, which it takes back itself. */
  atomic_fetch_and_explicit(&pool.active, ~CLOSED, memory_order_acq_rel);
  atomic_fetch_add(&pool.pool_runs, 1);
  pthread_mutex_lock(&pool.lock);
  atomic_fetch_add_explicit(&pool.generation, 1, memory_order_release);
  if (pool.sleeping)
    pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);

  take_blocks(0, team);

  /* Every block is taken; wait only for the workers still running one. */
  if (atomic_fetch_or_explicit(&pool.active, CLOSED, memory_order_acq_rel) != 0) {
    for (int spins = 0; atomic_load_explicit(&pool.active, memory_order_acquire) != CLOSED;) {
      if (++spins < SPIN_ROUNDS)
        continue;
      pthread_mutex_lock(&pool.lock);
      while (atomic_load(&pool.active) != CLOSED)
        pthread_cond_wait(&pool.done, &pool.lock);
      pthread_mutex_unlock(&pool.lock);
    }
  }
  pthread_mutex_unlock(&pool.owner);
}

/* ---- The OpenMP runtime ABI subset (names and signatures as in LLVM's libomp). ---- */


MLXC_EXPORT void __kmpc_fork_call(ident_t *loc, int32_t argc, microtask_t fn, ...) {
  (void)loc;
  void *args[MAX_ARGS] = {0};
  if (argc > MAX_ARGS)
    abort(); /* the IR builder passes one aggregate; more than 16 means a foreign caller */
  va_list ap;
  va_start(ap, fn);
  for (int i = 0; i < argc; ++i)
    args[i] = va_arg(ap, void *);
  va_end(ap);
  run_region(fn, argc, args);
}

MLXC_EXPORT int32_t __kmpc_global_thread_num(ident_t *loc) {
  (void)loc;
  return my_tid;
}

/* The program's thread count (MLXC_THREADS when it was compiled), for the next region. */
MLXC_EXPORT void __kmpc_push_num_threads(ident_t *loc, int32_t gtid, int32_t n) {
  (void)loc, (void)gtid;
  pushed_threads = n;
}

/* The end of the region's only loop: the join in run_region is the barrier. */
MLXC_EXPORT void __kmpc_barrier(ident_t *loc, int32_t gtid) { (void)loc, (void)gtid; }

/* The iterations `lower..upper` (inclusive, step `incr`): inline, all of them; in the
 * pool, the next unclaimed block (none once the loop is done: upper < lower). The
 * stride steps past the end, so a chunked loop runs its block once. */
#define STATIC_INIT(NAME, T, ST)                                                             \
  MLXC_EXPORT void NAME(ident_t *loc, int32_t gtid, int32_t sched, int32_t *last, T *lower,   \
                        T *upper, ST *stride, ST incr, ST chunk) {                           \
    (void)loc, (void)gtid, (void)sched, (void)chunk;                                         \
    if (incr == 0)                                                                           \
      incr = 1;                                                                              \
    T lo = *lower, hi = *upper;                                                              \
    int64_t trips;                                                                           \
    if (incr > 0)                                                                            \
      trips = hi < lo ? 0 : (int64_t)((hi - lo) / (T)incr) + 1;                              \
    else                                                                                     \
      trips = lo < hi ? 0 : (int64_t)((lo - hi) / (T)(-incr)) + 1;                           \
    int64_t begin = 0, end = trips;                                                          \
    if (my_team > 1) {                                                                       \
      int64_t blocks = (int64_t)my_team * BLOCKS_PER_THREAD;                                 \
      int64_t size = trips / blocks > 0 ? (trips + blocks - 1) / blocks : 1;                 \
      begin = atomic_fetch_add_explicit(&pool.next, size, memory_order_relaxed);             \
      if (begin > trips)                                                                     \
        begin = trips;                                                                       \
      end = begin + size < trips ? begin + size : trips;                                     \
      claimed = begin < end;                                                                 \
    }                                                                                        \
    *lower = (T)(lo + (T)(begin * incr));                                                    \
    *upper = (T)(lo + (T)((end - 1) * incr));                                                \
    *stride = (ST)(trips * incr);                                                            \
    *last = end == trips && begin < end;                                                     \
  }

STATIC_INIT(__kmpc_for_static_init_4, int32_t, int32_t)
STATIC_INIT(__kmpc_for_static_init_4u, uint32_t, int32_t)
STATIC_INIT(__kmpc_for_static_init_8, int64_t, int64_t)
STATIC_INIT(__kmpc_for_static_init_8u, uint64_t, int64_t)

MLXC_EXPORT void __kmpc_for_static_fini(ident_t *loc, int32_t gtid) { (void)loc, (void)gtid; }

/* ---- mlxc_parallel_range: a worksharing loop for the runtime's kernels ---- */

typedef struct {
  void (*body)(const void *ctx, int64_t begin, int64_t end);
  const void *ctx;
  int64_t count;
} range_args;

static void range_region(int32_t *gtid, int32_t *btid, range_args *r) {
  (void)btid;
  int32_t last = 0;
  int64_t lower = 0, upper = r->count - 1, stride = 1;
  __kmpc_for_static_init_8(NULL, *gtid, 34, &last, &lower, &upper, &stride, 1, 1);
  if (lower <= upper)
    r->body(r->ctx, lower, upper + 1);
}

void mlxc_parallel_range(int64_t count, int32_t threads,
                         void (*body)(const void *ctx, int64_t begin, int64_t end),
                         const void *ctx) {
  if (count <= 0)
    return;
  if (threads <= 1 || count < 2) {
    body(ctx, 0, count);
    return;
  }
  range_args r = {body, ctx, count};
  __kmpc_push_num_threads(NULL, __kmpc_global_thread_num(NULL), threads);
  __kmpc_fork_call(NULL, 1, (microtask_t)range_region, &r);
}
