/* inter_do.c — the perfect intervention do(x_t = v): the target's column is
 * the constant v (in standardised units when --standardize). v is drawn by
 * tc_gen_inter_signed_value. */
#include "tc_gen_inter.h"

const tc_gen_inter tc_gen_inter_do = {TWINCACHE_DO, NULL, tc_gen_inter_signed_value};
