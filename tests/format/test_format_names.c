/* test_format_names.c — the one name <-> code table (formats/names.c): every
 * code has a name that maps back to it, the enums and the table agree,
 * unknown names and codes are refused with a message naming them. */
#include <string.h>

#include "twincache_format.h"
#define TC_TEST_STRERROR twincache_strerror
#include "tc_test.h"

int main(void) {
  const int counts[4] = {TWINCACHE_FAMILY_COUNT, TWINCACHE_MECH_COUNT, TWINCACHE_NOISE_COUNT,
                         TWINCACHE_INTER_KIND_COUNT};
  for (int ch = 0; ch < 4; ch++) {
    TC_CHECK(twincache_choice_count(ch) == counts[ch]);
    const char *const *all = twincache_choice_names(ch);
    TC_REQUIRE(all != NULL);
    for (int c = 0; c < counts[ch]; c++) {
      const char *s = twincache_choice_name(ch, c);
      TC_REQUIRE(s != NULL);
      TC_CHECK(all[c] == s);
      TC_CHECK(twincache_choice_code(ch, s, (size_t)-1) == c);
      TC_CHECK(twincache_choice_code(ch, s, strlen(s)) == c);
      for (int d = 0; d < c; d++) TC_CHECK(strcmp(s, twincache_choice_name(ch, d)) != 0);
    }
    TC_CHECK(all[counts[ch]] == NULL);
    TC_CHECK(twincache_choice_name(ch, counts[ch]) == NULL);
    TC_CHECK(twincache_choice_name(ch, -1) == NULL);
  }
  /* the codes the format stores, by name */
  TC_CHECK(twincache_choice_code(TWINCACHE_CHOICE_FAMILY, "sf", (size_t)-1) == TWINCACHE_FAMILY_SF);
  TC_CHECK(twincache_choice_code(TWINCACHE_CHOICE_FAMILY, "er:0.5", 2) == TWINCACHE_FAMILY_ER);
  TC_CHECK(twincache_choice_code(TWINCACHE_CHOICE_MECHANISM, "mlp", (size_t)-1) == TWINCACHE_MECH_MLP);
  TC_CHECK(twincache_choice_code(TWINCACHE_CHOICE_NOISE, "laplace", (size_t)-1) == TWINCACHE_NOISE_LAPLACE);
  TC_CHECK(twincache_choice_code(TWINCACHE_CHOICE_INTER_KIND, "shift", (size_t)-1) == TWINCACHE_SHIFT);
  TC_CHECK(twincache_choice_code(TWINCACHE_CHOICE_INTER_KIND, "noise", (size_t)-1) == TWINCACHE_INTER_NOISE);
  /* refusals leave one message naming the name */
  TC_CHECK_RC(twincache_choice_code(TWINCACHE_CHOICE_MECHANISM, "mlpx", (size_t)-1), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "mechanism 'mlpx'") != NULL);
  TC_CHECK_RC(twincache_choice_code(TWINCACHE_CHOICE_FAMILY, "", 0), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_choice_code(TWINCACHE_CHOICE_NOISE, NULL, 0), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_choice_code(9, "er", (size_t)-1), TWINCACHE_EINVAL);
  TC_CHECK(twincache_choice_count(9) == 0 && twincache_choice_count(-1) == 0);
  TC_CHECK(twincache_choice_names(9) == NULL);
  return tc_test_finish("test_format_names");
}
