/* Allocation for generated code's temporaries (`finalize-memref-to-llvm` with
 * use-generic-functions calls these instead of malloc/free).
 *
 * glibc serves blocks above its mmap threshold (128 KiB by default) with a fresh
 * mmap and gives them back with munmap, so a program whose temporaries are a few
 * hundred KiB page-faults all of them in again on every call: a convolution's padded
 * input cost 1.4 ms of faults per 0.6 ms call. XLA keeps its temporaries in a
 * per-executable arena; we keep a few freed large blocks instead, handed back to the
 * next request they fit. Small blocks go to malloc, which already reuses them.
 *
 * Every block starts with a header holding its capacity, so free knows which path
 * a pointer came from. Thread-safe: parallel regions may allocate.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "mlxc_runtime.h"

#define HEADER 64                  /* keeps the payload 64-byte aligned */
#define LARGE (64 * 1024)          /* below this, malloc's own free lists do well */
#define SLOTS 16                   /* freed large blocks kept */
#define MAX_KEPT (256u << 20)      /* bytes kept at most, so idle programs hold little */

typedef struct {
  size_t capacity; /* payload bytes; blocks of at least LARGE may be kept on free */
} Header;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *kept[SLOTS];
static size_t kept_bytes;

static Header *header_of(void *payload) { return (Header *)((char *)payload - HEADER); }

/* A block of `size` payload bytes; one that cannot be had (or whose size wraps
 * around with the header) ends the checked call, or the process with a message:
 * generated code never tests the pointer. */
static void *fresh(size_t size) {
  void *base = NULL;
  if (size > SIZE_MAX - 2 * HEADER || posix_memalign(&base, HEADER, HEADER + size) != 0)
    mlxc_alloc_failed(size);
  Header *h = (Header *)base;
  h->capacity = size;
  return (char *)base + HEADER;
}

/* The smallest kept block that holds `size` without wasting more than half of it. */
static void *take(size_t size) {
  int best = -1;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < SLOTS; ++i) {
    if (!kept[i])
      continue;
    size_t cap = header_of(kept[i])->capacity;
    if (cap >= size && cap / 2 <= size &&
        (best < 0 || cap < header_of(kept[best])->capacity))
      best = i;
  }
  void *p = NULL;
  if (best >= 0) {
    p = kept[best];
    kept[best] = NULL;
    kept_bytes -= header_of(p)->capacity;
  }
  pthread_mutex_unlock(&lock);
  return p;
}

MLXC_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size) {
  if (size >= LARGE) {
    void *p = take(size);
    if (p)
      return p;
  }
  return fresh(size);
}

MLXC_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  /* Payloads are 64-byte aligned; MLIR asks for at most that for vectors. Larger
   * alignments get an over-allocation the caller aligns within (allocated != aligned
   * in the memref descriptor is fine: free receives the allocated pointer). */
  if (alignment <= HEADER)
    return _mlir_memref_to_llvm_alloc(size);
  if (size > SIZE_MAX - alignment)
    mlxc_alloc_failed(size);
  return fresh(size + alignment);
}

MLXC_EXPORT void _mlir_memref_to_llvm_free(void *payload) {
  if (!payload)
    return;
  Header *h = header_of(payload);
  if (h->capacity >= LARGE && h->capacity <= MAX_KEPT) {
    void *evicted = NULL;
    pthread_mutex_lock(&lock);
    int slot = -1;
    for (int i = 0; i < SLOTS && slot < 0; ++i)
      if (!kept[i])
        slot = i;
    if (slot < 0) { /* full: replace the smallest kept block if this one is larger */
      slot = 0;
      for (int i = 1; i < SLOTS; ++i)
        if (header_of(kept[i])->capacity < header_of(kept[slot])->capacity)
          slot = i;
      if (header_of(kept[slot])->capacity >= h->capacity)
        slot = -1;
    }
    if (slot >= 0) {
      evicted = kept[slot];
      if (evicted)
        kept_bytes -= header_of(evicted)->capacity;
      kept[slot] = payload;
      kept_bytes += h->capacity;
      payload = NULL;
      /* Over the byte cap: give back other blocks, largest first. */
      while (kept_bytes > MAX_KEPT) {
        int big = -1;
        for (int i = 0; i < SLOTS; ++i)
          if (kept[i] && i != slot &&
              (big < 0 || header_of(kept[i])->capacity > header_of(kept[big])->capacity))
            big = i;
        if (big < 0)
          break;
        kept_bytes -= header_of(kept[big])->capacity;
        free(header_of(kept[big]));
        kept[big] = NULL;
      }
    }
    pthread_mutex_unlock(&lock);
    if (evicted)
      free(header_of(evicted));
    if (!payload)
      return;
  }
  free(h);
}

MLXC_EXPORT size_t mlxc_kept_bytes(void) {
  pthread_mutex_lock(&lock);
  size_t n = kept_bytes;
  pthread_mutex_unlock(&lock);
  return n;
}
