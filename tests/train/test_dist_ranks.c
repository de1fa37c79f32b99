/* test_dist_ranks: tc_dist_dlopen.c over a real MPI of Open MPI's ABI, run
 * by mpirun with 2 ranks: the library found by its soname, the handles read
 * from its exports (comm world, float, double, byte, sum, in place), so the
 * sums over the ranks and rank 0's broadcast arrive exactly.
 * Usage: mpirun -np 2 test_train_dist_ranks */
#include <stdio.h>
#include <string.h>

#include "tc_dist.h"
#include "tc_test.h"
#include "twincache_format.h"

int main(int argc, char **argv) {
  tc_dist d;
  TC_CHECK(tc_dist_init(&d, &argc, &argv) == 0, "%s", twincache_last_error());
  TC_CHECK(d.joined && d.world == 2 && (d.rank == 0 || d.rank == 1) && d.local_rank == d.rank,
           "joined %d, rank %d of %d, local %d", d.joined, d.rank, d.world, d.local_rank);
  char name[256];
  tc_dist_describe(name, sizeof name);
  TC_CHECK(strstr(name, "Open MPI") && strstr(name, "loaded at run time from libmpi.so.40"), "%s", name);
  /* rank r holds r+1 and -(r+1)/4: sums 3 and -0.75 on both */
  float f[2] = {(float)(d.rank + 1), -(float)(d.rank + 1) / 4};
  double g[3] = {(double)(d.rank + 1), 1e-300 * (d.rank + 1), -2.5};
  TC_CHECK(tc_dist_sum_f32(&d, f, 2) == 0 && f[0] == 3.0f && f[1] == -0.75f, "%g %g", f[0], f[1]);
  TC_CHECK(tc_dist_sum_f64(&d, g, 3) == 0 && g[0] == 3.0 && g[1] == 3e-300 && g[2] == -5.0);
  char id[128];
  memset(id, d.rank == 0 ? 'z' : 'x', sizeof id);
  TC_CHECK(tc_dist_bcast(&d, id, sizeof id, 0) == 0 && id[0] == 'z' && id[127] == 'z');
  int failed = tc_test_result();
  printf("rank %d: %s\n", d.rank, failed ? "FAILED" : "ok");
  tc_dist_finalize(&d);
  return failed;
}
