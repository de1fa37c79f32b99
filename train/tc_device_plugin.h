/* tc_device_plugin.h — the CUDA backend (tc_device.h) as a plugin that a
 * trainer built without CUDA loads at run time: libtwincache_cuda.so, built
 * from tc_device_cuda.cu and kernels/ with the CUDA runtime linked in
 * statically (libcudart_static.a, which loads the driver's libcuda.so.1
 * itself), so the portable wheel's trainer trains on a GPU where a driver
 * is present and on the CPU elsewhere, from one file. tc_device_dlopen.c
 * loads it; tc_device_plugin.c is its one exported symbol.
 *
 * The plugin is one table of entry points, named TC_CUDA_PLUGIN_SYMBOL.
 * Both sides come from the same build: the loader refuses a table whose
 * ABI number, build version or struct sizes differ from its own (a plugin
 * of another twincache would read the batches wrongly). The plugin keeps
 * its own copy of twincache's error state: a failed call's message is read
 * with last_error, and a message of the trainer's (a failed gradient sum)
 * is handed in with set_error. */
#ifndef TC_DEVICE_PLUGIN_H
#define TC_DEVICE_PLUGIN_H

#include <stdint.h>

#include "tc_device.h"

#define TC_CUDA_PLUGIN_SYMBOL "twincache_cuda_plugin"
#define TC_CUDA_PLUGIN_FILE "libtwincache_cuda.so"
#define TC_CUDA_PLUGIN_ABI 1u /* bump when this table changes */

/* the structs that cross the boundary, by size: another build's differ */
enum { TC_PLUGIN_LAYOUT, TC_PLUGIN_BATCH, TC_PLUGIN_MODEL, TC_PLUGIN_OPTIM, TC_PLUGIN_TIMING, TC_PLUGIN_SIZES };
#define TC_CUDA_PLUGIN_SIZES                                                                               \
  {sizeof(twincache_batch_layout), sizeof(twincache_batch), sizeof(tc_model), sizeof(tc_optim),           \
   sizeof(tc_cuda_timing)}

typedef struct tc_cuda_plugin {
  uint32_t abi;                       /* TC_CUDA_PLUGIN_ABI */
  uint32_t table_bytes;               /* sizeof(tc_cuda_plugin) */
  uint32_t sizes[TC_PLUGIN_SIZES];    /* TC_CUDA_PLUGIN_SIZES */
  const char *version;                /* TWINCACHE_VERSION_STRING */
  const char *(*last_error)(void);    /* the plugin's twincache_last_error */
  int (*set_error)(int status, const char *message); /* sets it; returns status */
  /* tc_device.h, entry for entry */
  int (*select)(int local_rank, int forced, int *index, int *count);
  int (*check)(void);
  void (*device_name)(char *name, size_t cap);
  void *(*host_alloc)(size_t bytes, void *user);
  void (*host_free)(void *ptr, void *user);
  int (*create)(tc_cuda **out, const twincache_batch_layout *l, const tc_model *m);
  void (*free)(tc_cuda *c);
  int (*copy)(tc_cuda *c, int buf, const twincache_batch *batch);
  int (*copy_wait)(tc_cuda *c, int buf);
  void (*set_reduce)(tc_cuda *c, tc_cuda_reduce_fn reduce, void *user);
  int (*step)(tc_cuda *c, int buf, const tc_optim *o, float lr, int t);
  int (*step_result)(tc_cuda *c, int buf, float *loss);
  int (*eval)(tc_cuda *c, const void *host_slab, float pos_weight, float *loss, float *logit, float *T,
              float *pair_w);
  int (*download)(tc_cuda *c, tc_model *m);
  void (*get_timing)(const tc_cuda *c, tc_cuda_timing *t);
  int (*bench_h2d)(size_t bytes, int reps, double *gb_per_s);
} tc_cuda_plugin;

typedef const tc_cuda_plugin *(*tc_cuda_plugin_fn)(void);

#endif /* TC_DEVICE_PLUGIN_H */
