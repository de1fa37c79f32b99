/* fake_cuda_plugin.c — a stand-in libtwincache_cuda.so for test_device_dlopen
 * on machines without a GPU: the table of train/tc_device_plugin.h over host
 * memory, with its own error state (as the real plugin has its own copy of
 * twincache's). It sees 3 devices; check fails with FAKE_CHECK_MESSAGE;
 * a step calls the reduce hook on 4 gradients and its tot and, when the
 * hook succeeds, its loss is tot[1] / tot[0] of what the hook left. Built
 * with -DFAKE_PLUGIN_OTHER_BUILD its version string is another build's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_device_plugin.h"
#include "twincache_format.h"

#define FAKE_CHECK_MESSAGE "fake plugin: no device here"
#ifdef FAKE_PLUGIN_OTHER_BUILD
#define FAKE_VERSION "0.0.9"
#else
#define FAKE_VERSION TWINCACHE_VERSION_STRING
#endif

static __thread char message[512];

struct tc_cuda {
  tc_cuda_reduce_fn reduce;
  void *user;
  float grads[4], loss;
  double tot[2];
  tc_cuda_timing timing;
};

static const char *last_error(void) { return message; }
static int set_error(int status, const char *m) {
  snprintf(message, sizeof message, "%s", m);
  return status;
}
static int fail(const char *m) { return set_error(TWINCACHE_EDEVICE, m); }

static int fake_select(int local_rank, int forced, int *index, int *count) {
  *count = 3, *index = tc_device_index(local_rank, 3, forced);
  return *index < 0 ? fail("fake plugin: no such device") : 0;
}
static int fake_check(void) { return fail(FAKE_CHECK_MESSAGE); }
static void fake_name(char *name, size_t cap) { snprintf(name, cap, "fake device"); }
static void *fake_host_alloc(size_t bytes, void *user) {
  void *p = bytes > ((size_t)1 << 40) ? NULL : malloc(bytes);
  if (!p) fail("fake plugin: host allocation refused");
  return p;
}
static void fake_host_free(void *ptr, void *user) { free(ptr); }
static int fake_create(tc_cuda **out, const twincache_batch_layout *l, const tc_model *m) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : fail("fake plugin: out of memory");
}
static void fake_free(tc_cuda *c) { free(c); }
static int fake_copy(tc_cuda *c, int buf, const twincache_batch *b) {
  if (buf < 0 || buf > 1) return fail("fake plugin: no such buffer");
  c->timing.copies++;
  return 0;
}
static int fake_copy_wait(tc_cuda *c, int buf) { return 0; }
static void fake_set_reduce(tc_cuda *c, tc_cuda_reduce_fn reduce, void *user) { c->reduce = reduce, c->user = user; }
static int fake_step(tc_cuda *c, int buf, const tc_optim *o, float lr, int t) {
  c->tot[0] = 1, c->tot[1] = 0.5;
  if (c->reduce && c->reduce(c->user, c->grads, 4, c->tot, NULL) != 0)
    return TWINCACHE_EDEVICE; /* the hook left the message (the real plugin's rule) */
  c->loss = (float)(c->tot[1] / c->tot[0]);
  c->timing.steps++;
  return 0;
}
static int fake_step_result(tc_cuda *c, int buf, float *loss) {
  *loss = c->loss;
  return 0;
}
static int fake_eval(tc_cuda *c, const void *slab, float pw, float *loss, float *logit, float *T, float *w) {
  return fail("fake plugin: no evaluation");
}
static int fake_download(tc_cuda *c, tc_model *m) { return 0; }
static void fake_timing(const tc_cuda *c, tc_cuda_timing *t) { *t = c->timing; }
static int fake_bench(size_t bytes, int reps, double *gbs) {
  *gbs = 12.5;
  return 0;
}

const tc_cuda_plugin *twincache_cuda_plugin(void) {
  static const tc_cuda_plugin table = {
      .abi = TC_CUDA_PLUGIN_ABI, .table_bytes = sizeof(tc_cuda_plugin), .sizes = TC_CUDA_PLUGIN_SIZES,
      .version = FAKE_VERSION, .last_error = last_error, .set_error = set_error, .select = fake_select,
      .check = fake_check, .device_name = fake_name, .host_alloc = fake_host_alloc,
      .host_free = fake_host_free, .create = fake_create, .free = fake_free, .copy = fake_copy,
      .copy_wait = fake_copy_wait, .set_reduce = fake_set_reduce, .step = fake_step,
      .step_result = fake_step_result, .eval = fake_eval, .download = fake_download,
      .get_timing = fake_timing, .bench_h2d = fake_bench,
  };
  return &table;
}
