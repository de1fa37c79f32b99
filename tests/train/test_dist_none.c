/* test_dist_none: the trainer built without MPI (tc_dist_none.c, the
 * portable wheel's) refuses to start as one of several ranks of an MPI
 * launcher — each would train alone — and runs as rank 0 of 1 otherwise
 * (no launcher, a world of 1, a value that is no number). */
#include <stdlib.h>
#include <string.h>

#include "tc_dist.h"
#include "tc_test.h"
#include "twincache_format.h"

static int init_with(const char *var, const char *val) {
  unsetenv("OMPI_COMM_WORLD_SIZE"), unsetenv("PMI_SIZE");
  if (var) setenv(var, val, 1);
  tc_dist d;
  int argc = 1;
  char *args[] = {"twincache-train", NULL}, **argv = args;
  int rc = tc_dist_init(&d, &argc, &argv);
  if (rc == 0) TC_CHECK(d.rank == 0 && d.world == 1 && !d.joined);
  return rc;
}

int main(void) {
  TC_CHECK(init_with(NULL, NULL) == 0);
  TC_CHECK(init_with("OMPI_COMM_WORLD_SIZE", "1") == 0);
  TC_CHECK(init_with("PMI_SIZE", "x") == 0);
  TC_CHECK(init_with("OMPI_COMM_WORLD_SIZE", "2") != 0);
  TC_CHECK(strstr(twincache_last_error(), "one of 2 (OMPI_COMM_WORLD_SIZE=2)") != NULL, "%s", twincache_last_error());
  TC_CHECK(init_with("PMI_SIZE", "8") != 0);
  TC_CHECK(strstr(twincache_last_error(), "built without MPI") != NULL, "%s", twincache_last_error());
  return tc_test_result();
}
