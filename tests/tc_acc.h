/* tc_acc.h — a per-graph accumulator for the tests' two-sample checks: the
 * sum and sum of squares of one statistic over graphs, its mean and the
 * standard error of that mean. Shared by the fresh-world distribution test
 * (tests/loader) and the independent-worlds test (tests/scm). Header-only. */
#ifndef TC_ACC_H
#define TC_ACC_H

#include <math.h>
#include <stdint.h>

typedef struct acc { /* per-graph averages of one statistic */
  double sum, sq;
  uint64_t graphs;
} acc;

static inline void acc_add(acc *a, double graph_value) {
  a->sum += graph_value;
  a->sq += graph_value * graph_value;
  a->graphs++;
}
static inline double acc_mean(const acc *a) { return a->graphs ? a->sum / a->graphs : 0.0; }
/* the standard error of the mean over graphs (INFINITY below 2 graphs) */
static inline double acc_se(const acc *a) {
  if (a->graphs < 2) return INFINITY;
  double m = acc_mean(a), v = (a->sq - a->graphs * m * m) / (a->graphs - 1);
  return sqrt(v > 0 ? v : 0) / sqrt((double)a->graphs);
}

#endif
