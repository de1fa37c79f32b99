/* tc_dist_none.c — tc_dist.h when twincache was built without MPI: every
 * process is rank 0 of 1, the sums leave their buffers as they are. */
#include <stdio.h>

#include "tc_dist.h"

int tc_dist_init(tc_dist *d, int *argc, char ***argv) {
  (void)argc, (void)argv;
  *d = (tc_dist){.rank = 0, .world = 1, .local_rank = 0, .joined = 0};
  return 0;
}
void tc_dist_finalize(tc_dist *d) { (void)d; }
void tc_dist_abort(const tc_dist *d, int status) { (void)d, (void)status; }
int tc_dist_sum_f32(const tc_dist *d, float *buf, size_t n) {
  (void)d, (void)buf, (void)n;
  return 0;
}
int tc_dist_sum_f64(const tc_dist *d, double *buf, size_t n) {
  (void)d, (void)buf, (void)n;
  return 0;
}
int tc_dist_bcast(const tc_dist *d, void *buf, size_t bytes, int root) {
  (void)d, (void)buf, (void)bytes, (void)root;
  return 0;
}
void tc_dist_describe(char *name, size_t cap) {
  snprintf(name, cap, "none (built without MPI)");
}
