/* tc_device_none.c — tc_device.h when twincache was built without CUDA:
 * no GPU is ever usable, and every entry point fails with TWINCACHE_EDEVICE
 * and one clear message (twincache_last_error). */
#include <stdio.h>
#include <stdlib.h>

#include "tc_device.h"
#include "tc_error.h"

static int tc_no_cuda(void) {
  return tc_error_set(TWINCACHE_EDEVICE, "built without CUDA (nvcc was not found at configure time)");
}

int tc_cuda_select(int local_rank, int forced, int *index, int *count) {
  *index = -1, *count = 0;
  return tc_error_set(TWINCACHE_EDEVICE, "built without CUDA");
}
int tc_cuda_check(void) { return tc_error_set(TWINCACHE_EDEVICE, "built without CUDA"); }
void tc_cuda_device_name(char *name, size_t cap) {
  if (cap) name[0] = '\0';
}
void *tc_cuda_host_alloc(size_t bytes, void *user) { return NULL; }
void tc_cuda_host_free(void *ptr, void *user) {}
int tc_cuda_create(tc_cuda **out, const twincache_batch_layout *l, const tc_model *m) {
  *out = NULL;
  return tc_no_cuda();
}
void tc_cuda_free(tc_cuda *c) {}
int tc_cuda_copy(tc_cuda *c, int buf, const twincache_batch *batch) { return tc_no_cuda(); }
int tc_cuda_copy_wait(tc_cuda *c, int buf) { return tc_no_cuda(); }
void tc_cuda_set_reduce(tc_cuda *c, tc_cuda_reduce_fn reduce, void *user) {}
int tc_cuda_step(tc_cuda *c, int buf, const tc_optim *o, float lr, int t) { return tc_no_cuda(); }
int tc_cuda_step_result(tc_cuda *c, int buf, float *loss) { return tc_no_cuda(); }
int tc_cuda_eval(tc_cuda *c, const void *host_slab, float pos_weight, float *loss, float *logit,
                 float *T, float *pair_w) {
  return tc_no_cuda();
}
int tc_cuda_download(tc_cuda *c, tc_model *m) { return tc_no_cuda(); }
void tc_cuda_get_timing(const tc_cuda *c, tc_cuda_timing *t) {
  tc_cuda_timing z = {0};
  *t = z;
}
int tc_cuda_bench_h2d(size_t bytes, int reps, double *gb_per_s) { return tc_no_cuda(); }
