/* inter_shift.c — the additive shift x_t = f_t(pa) + noise + v (v in raw
 * units, also with --standardize). v is drawn by tc_gen_inter_signed_value. */
#include "tc_gen_inter.h"

const tc_gen_inter tc_gen_inter_shift = {TWINCACHE_SHIFT, NULL, tc_gen_inter_signed_value, NULL, NULL}; /* --values: inter_do.c */
