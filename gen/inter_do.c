/* inter_do.c — the perfect intervention do(x_t = v): the target's column is
 * the constant v (in standardised units when --standardize). v is drawn by
 * tc_gen_inter_signed_value. */
#include "tc_gen_inter.h"

/* --values and --value-dist: do's, and also shift's (the same draw) and
 * noise's (--values alone); part of every config */
static void do_defaults(tc_gen_config *c) {
  c->value_dist = TC_VALUES_SIGNED;
  c->value_min = 1.0;
  c->value_max = 3.0;
}

static const char *const k_value_dists[] = {"uniform", "signed", NULL}; /* enum tc_gen_value_dist */

static size_t do_options(tc_gen_config *c, tc_opt *o) {
  o[0] = (tc_opt){.name = "--values", .meta = "LO:HI", .kind = TC_OPT_F64_PAIR, .dst = &c->value_min,
                  .dst2 = &c->value_max, .flo = -1e6, .fhi = 1e6, .open = TC_OPEN_LO | TC_OPEN_HI,
                  .help = "intervention values (default {})"};
  o[1] = (tc_opt){.name = "--value-dist", .meta = "uniform|signed", .kind = TC_OPT_CHOICE, .dst = &c->value_dist,
                  .choices = k_value_dists, .help = "v in [LO,HI), or +-[LO,HI) with random sign (default {})"};
  return 2;
}

const tc_gen_inter tc_gen_inter_do = {TWINCACHE_DO, NULL, tc_gen_inter_signed_value, do_defaults, do_options};
