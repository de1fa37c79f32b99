/* tc_metrics.h — evaluation metrics of twincache-train: AUROC, AUPRC
 * (average precision) and the structural Hamming distance. Internal. */
#ifndef TC_METRICS_H
#define TC_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Area under the ROC curve of scores against 0/1 labels, ties counted as
 * half (Mann-Whitney). NaN when one class is absent or out of memory. */
double tc_auroc(const float *score, const uint8_t *label, size_t n);

/* Average precision: sum over distinct thresholds (high to low) of
 * precision * (recall gained), tied scores taken as one threshold.
 * NaN when there is no positive or out of memory. */
double tc_auprc(const float *score, const uint8_t *label, size_t n);

/* SHD of one graph: over unordered pairs {i,j} of real nodes (mask), 1 for
 * every pair whose edge state (none, i->j, j->i, both) differs between
 * pred and truth; so a missing, extra or reversed edge costs 1.
 * pred, truth (N,N) u8 with [i*N+j] = edge i->j; mask (N) u8. */
unsigned tc_shd(const uint8_t *pred, const uint8_t *truth, const uint8_t *mask, int N);

/* Growable list of scored pairs for one evaluation pass. */
typedef struct tc_scores {
  float *model, *baseline; /* model probability, |T| */
  uint8_t *label;
  size_t n, cap;
} tc_scores;
/* Appends one pair; returns 0 or -1 when out of memory. */
int tc_scores_push(tc_scores *s, float model, float baseline, uint8_t label);
void tc_scores_free(tc_scores *s);

#endif /* TC_METRICS_H */
