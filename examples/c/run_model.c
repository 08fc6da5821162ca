/* Calls an mlxc artifact from C: no Python, no mlxc installed, only the artifact.
 *
 *   mlxc compile model.mlir -o model.so          # writes model.so and model.h
 *   cc -I. examples/c/run_model.c model.so -Wl,-rpath,'$ORIGIN' -o run_model
 *   ./run_model x.bin w.bin ... out.bin          # one raw file per input, then per output
 *
 * Each input file holds the argument's bytes as `numpy.ndarray.tofile` writes them
 * (dense, row-major, native byte order); each output is written the same way.
 * Build with -DMLXC_PROGRAM_HEADER='"other.h"' for a header of another name.
 */
#include <stdio.h>
#include <stdlib.h>

#ifndef MLXC_PROGRAM_HEADER
#define MLXC_PROGRAM_HEADER "model.h"
#endif
#include MLXC_PROGRAM_HEADER

static int read_file(const char *path, void *data, int64_t bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  size_t got = fread(data, 1, (size_t)bytes, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  if ((int64_t)got != bytes || extra) {
    fprintf(stderr, "%s: expected exactly %lld bytes\n", path, (long long)bytes);
    return -1;
  }
  return 0;
}

static int write_file(const char *path, const void *data, int64_t bytes) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, (size_t)bytes, f) != (size_t)bytes) {
    perror(path);
    if (f)
      fclose(f);
    return -1;
  }
  return fclose(f);
}

int main(int argc, char **argv) {
  if (mlxc_abi_version() != MLXC_ABI_VERSION) {
    fprintf(stderr, "artifact ABI %d, header ABI %d\n", mlxc_abi_version(), MLXC_ABI_VERSION);
    return 1;
  }
  if (argc != 1 + MLXC_NUM_BUFFERS) {
    fprintf(stderr, "usage: %s", argv[0]);
    for (int i = 0; i < MLXC_NUM_BUFFERS; ++i)
      fprintf(stderr, " %s.bin", mlxc_buffer_names[i]);
    fprintf(stderr, "\n");
    return 2;
  }
  void *buffers[MLXC_NUM_BUFFERS > 0 ? MLXC_NUM_BUFFERS : 1];
  for (int i = 0; i < MLXC_NUM_BUFFERS; ++i) {
    /* malloc's alignment suits every element type; +1 keeps zero-size arrays valid. */
    buffers[i] = malloc((size_t)mlxc_buffer_bytes[i] + 1);
    if (!buffers[i])
      return 1;
    if (i < MLXC_NUM_INPUTS && read_file(argv[1 + i], buffers[i], mlxc_buffer_bytes[i]))
      return 1;
  }
  mlxc_entry(buffers);
  for (int i = MLXC_NUM_INPUTS; i < MLXC_NUM_BUFFERS; ++i) {
    if (write_file(argv[1 + i], buffers[i], mlxc_buffer_bytes[i]))
      return 1;
    printf("%s: %s, %lld bytes -> %s\n", mlxc_buffer_names[i], mlxc_buffer_types[i],
           (long long)mlxc_buffer_bytes[i], argv[1 + i]);
  }
  for (int i = 0; i < MLXC_NUM_BUFFERS; ++i)
    free(buffers[i]);
  return 0;
}
