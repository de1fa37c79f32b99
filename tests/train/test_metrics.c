/* test_metrics: AUROC, AUPRC and SHD against hand-computed small cases. */
#include <math.h>
#include <stdio.h>

#include "tc_metrics.h"
#include "tc_test.h"


int main(void) {
  /* perfect ranking */
  float s1[4] = {0.9f, 0.8f, 0.2f, 0.1f};
  uint8_t l1[4] = {1, 1, 0, 0};
  TC_CHECK_NEAR(tc_auroc(s1, l1, 4), 1.0, 1e-9); /* auroc perfect */
  TC_CHECK_NEAR(tc_auprc(s1, l1, 4), 1.0, 1e-9); /* auprc perfect */
  /* scores 0.9(+) 0.8(-) 0.7(+) 0.1(-): AUROC = 3 of 4 pairs won = 0.75;
   * AP = 1*(1/2) + (2/3)*(1/2) = 0.8333... */
  float s2[4] = {0.9f, 0.8f, 0.7f, 0.1f};
  uint8_t l2[4] = {1, 0, 1, 0};
  TC_CHECK_NEAR(tc_auroc(s2, l2, 4), 0.75, 1e-9); /* auroc mixed */
  TC_CHECK_NEAR(tc_auprc(s2, l2, 4), 1.0 / 2 + (2.0 / 3) / 2, 1e-9); /* auprc mixed */
  /* all tied: AUROC 0.5, AP = prevalence */
  float s3[5] = {1, 1, 1, 1, 1};
  uint8_t l3[5] = {1, 0, 0, 1, 0};
  TC_CHECK_NEAR(tc_auroc(s3, l3, 5), 0.5, 1e-9); /* auroc ties */
  TC_CHECK_NEAR(tc_auprc(s3, l3, 5), 0.4, 1e-9); /* auprc ties */
  /* tie between one positive and one negative at the top:
   * 0.9(+),0.9(-),0.5(+),0.2(-): AUROC = (0.5 + 1 + 1 + 0) / 4 = 0.625;
   * AP = (1/2)*(1/2) + (2/3)*(1/2) */
  float s4[4] = {0.9f, 0.9f, 0.5f, 0.2f};
  uint8_t l4[4] = {1, 0, 1, 0};
  TC_CHECK_NEAR(tc_auroc(s4, l4, 4), 0.625, 1e-9); /* auroc partial tie */
  TC_CHECK_NEAR(tc_auprc(s4, l4, 4), 0.25 + 1.0 / 3, 1e-9); /* auprc partial tie */
  if (!isnan(tc_auroc(s1, l3, 0)) || !isnan(tc_auprc(s1, (uint8_t[4]){0, 0, 0, 0}, 4))) {
    fprintf(stderr, "FAIL: degenerate inputs should give NaN\n");
    tc_test_count_failure();
  }
  /* SHD on 4 nodes (node 3 is padding): truth 0->1, 1->2; pred 1->0 (reversed),
   * 1->2 (right), 0->2 (extra), and an edge to the padding node (ignored) */
  uint8_t truth[16] = {0}, pred[16] = {0}, mask[4] = {1, 1, 1, 0};
  truth[0 * 4 + 1] = 1, truth[1 * 4 + 2] = 1;
  pred[1 * 4 + 0] = 1, pred[1 * 4 + 2] = 1, pred[0 * 4 + 2] = 1, pred[0 * 4 + 3] = 1;
  TC_CHECK_NEAR(tc_shd(pred, truth, mask, 4), 2, 1e-9); /* shd reversed + extra */
  TC_CHECK_NEAR(tc_shd(truth, truth, mask, 4), 0, 1e-9); /* shd identical */
  pred[0 * 4 + 1] = 1; /* 0<->1 both ways vs 0->1: still one mismatch for that pair */
  TC_CHECK_NEAR(tc_shd(pred, truth, mask, 4), 2, 1e-9); /* shd both directions */
  if (tc_test_failures()) return 1;
  printf("metrics: all hand-computed cases match\n");
  return 0;
}
