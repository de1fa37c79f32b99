/* tc_launch.c — rank and world size from the launcher's environment
 * (tc_launch.h). */
#include "tc_launch.h"

#include <stdio.h>
#include <stdlib.h>

#include "tc_args.h"

typedef struct launch_pair {
  const char *rank, *size, *source;
} launch_pair;

/* The documented order of tc_launch.h. */
static const launch_pair pairs[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE", "PMI_RANK/PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_PROCID/SLURM_NTASKS"},
    {"RANK", "WORLD_SIZE", "RANK/WORLD_SIZE"},
};

int tc_launch_by_mpi(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", NULL};
  for (int i = 0; vars[i]; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

int tc_launch_rank(uint32_t *rank, uint32_t *size, const char **source, char *msg, size_t cap) {
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
    const launch_pair *lp = &pairs[p];
    const char *r = getenv(lp->rank), *s = getenv(lp->size);
    if (!r && !s) continue;
    uint32_t rv, sv;
    if (!r || !s) {
      if (cap)
        snprintf(msg, cap, "%s is set but %s is not: the launcher must set both", r ? lp->rank : lp->size,
                 r ? lp->size : lp->rank);
      return TC_LAUNCH_BAD;
    }
    if (tc_parse_u32_in(s, 1, UINT32_MAX, &sv) != 0) {
      if (cap) snprintf(msg, cap, "%s=\"%.40s\" is not a world size (an integer >= 1)", lp->size, s);
      return TC_LAUNCH_BAD;
    }
    if (tc_parse_u32_in(r, 0, sv - 1, &rv) != 0) {
      if (cap) snprintf(msg, cap, "%s=\"%.40s\" is not a rank in 0..%u (%s=%u)", lp->rank, r, sv - 1, lp->size, sv);
      return TC_LAUNCH_BAD;
    }
    *rank = rv;
    *size = sv;
    *source = lp->source;
    return TC_LAUNCH_OK;
  }
  if (cap)
    snprintf(msg, cap, "no launcher set a rank: none of OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, RANK is in "
             "the environment");
  return TC_LAUNCH_NONE;
}
