/* metrics.c — AUROC, AUPRC and SHD (contract in tc_metrics.h). */
#include <math.h>
#include <stdlib.h>

#include "tc_metrics.h"

/* qsort context-free: sort indices by a global-free key array pair */
typedef struct {
  float score;
  uint8_t label;
} tc_pair;

static int tc_cmp_desc(const void *a, const void *b) {
  float x = ((const tc_pair *)a)->score, y = ((const tc_pair *)b)->score;
  return (x < y) - (x > y);
}

static tc_pair *tc_sorted(const float *score, const uint8_t *label, size_t n) {
  tc_pair *v = malloc(sizeof *v * (n ? n : 1));
  if (!v) return NULL;
  for (size_t i = 0; i < n; i++) v[i].score = score[i], v[i].label = label[i] ? 1 : 0;
  qsort(v, n, sizeof *v, tc_cmp_desc);
  return v;
}

double tc_auroc(const float *score, const uint8_t *label, size_t n) {
  tc_pair *v = tc_sorted(score, label, n);
  if (!v) return NAN;
  /* walk groups of tied scores from the top: every positive outranks the
   * negatives below it, and half of the negatives tied with it */
  double pos = 0, neg = 0, wins = 0;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    double gp = 0, gn = 0;
    while (j < n && v[j].score == v[i].score) {
      if (v[j].label) gp++;
      else gn++;
      j++;
    }
    wins += gn * pos + 0.5 * gp * gn; /* negatives here lose to positives above */
    pos += gp, neg += gn;
    i = j;
  }
  free(v);
  if (pos == 0 || neg == 0) return NAN;
  return wins / (pos * neg);
}

double tc_auprc(const float *score, const uint8_t *label, size_t n) {
  tc_pair *v = tc_sorted(score, label, n);
  if (!v) return NAN;
  double npos = 0;
  for (size_t i = 0; i < n; i++) npos += v[i].label;
  double tp = 0, fp = 0, ap = 0;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    double gp = 0;
    while (j < n && v[j].score == v[i].score) {
      if (v[j].label) gp++;
      else fp++;
      j++;
    }
    tp += gp;
    if (gp > 0) ap += (tp / (tp + fp)) * (gp / npos);
    i = j;
  }
  free(v);
  return npos > 0 ? ap : NAN;
}

unsigned tc_shd(const uint8_t *pred, const uint8_t *truth, const uint8_t *mask, int N) {
  unsigned d = 0;
  for (int i = 0; i < N; i++)
    for (int j = i + 1; j < N; j++) {
      if (!mask[i] || !mask[j]) continue;
      int ps = (pred[i * N + j] ? 1 : 0) | (pred[j * N + i] ? 2 : 0);
      int ts = (truth[i * N + j] ? 1 : 0) | (truth[j * N + i] ? 2 : 0);
      d += ps != ts;
    }
  return d;
}

int tc_scores_push(tc_scores *s, float model, float baseline, uint8_t label) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 4096;
    float *a = realloc(s->model, cap * sizeof(float));
    if (!a) return -1;
    s->model = a;
    float *b = realloc(s->baseline, cap * sizeof(float));
    if (!b) return -1;
    s->baseline = b;
    uint8_t *c = realloc(s->label, cap);
    if (!c) return -1;
    s->label = c;
    s->cap = cap;
  }
  s->model[s->n] = model, s->baseline[s->n] = baseline, s->label[s->n] = label;
  s->n++;
  return 0;
}

void tc_scores_free(tc_scores *s) {
  free(s->model), free(s->baseline), free(s->label);
  s->model = s->baseline = NULL, s->label = NULL;
  s->n = s->cap = 0;
}
