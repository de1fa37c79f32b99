/* test_gradcheck: the CPU backend's analytic gradients (MLP + BCE through
 * every layer) against central finite differences of the loss, for a sample
 * of parameters of every tensor. Runs everywhere. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_model.h"
#include "tc_synth.h"

int main(void) {
  int rc = 1, bad = 0, checked = 0;
  const int G = 3, N = 5, S = 16;
  tc_synth y = {0};
  tc_model *m = tc_model_create(7);
  tc_cpu *c = tc_cpu_create(G, N);
  if (!m || !c || tc_synth_make(&y, G, N, S, 2, 0.5, 1, 11) != 0) goto cleanup;
  tc_batch_view b;
  tc_batch_view_init(&b, &y.layout, y.slab);
  /* a few optimiser steps first so the loss is not at its symmetric start */
  tc_optim o = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .pos_weight = 1.5f,
                .total_steps = 5};
  for (int t = 1; t <= 5; t++) {
    tc_cpu_forward_backward(c, m, &b, o.pos_weight, 1);
    tc_cpu_adamw(m, &o, o.lr, t);
  }
  tc_cpu_forward_backward(c, m, &b, o.pos_weight, 1);
  for (int t = 0; t < TC_MODEL_TENSORS; t++) {
    size_t step = m->len[t] / 8 ? m->len[t] / 8 : 1;
    for (size_t k = 0; k < m->len[t]; k += step) {
      size_t i = m->off[t] + k;
      float save = m->params[i], h = 1e-2f;
      m->params[i] = save + h;
      double lp = tc_cpu_forward_backward(c, m, &b, o.pos_weight, 0);
      m->params[i] = save - h;
      double lm = tc_cpu_forward_backward(c, m, &b, o.pos_weight, 0);
      m->params[i] = save;
      double num = (lp - lm) / (2.0 * h), ana = m->grads[i];
      double err = fabs(num - ana) / fmax(1e-3, fabs(num) + fabs(ana));
      checked++;
      if (err > 5e-2) {
        bad++;
        fprintf(stderr, "FAIL tensor %d index %zu: analytic %.6g numeric %.6g (rel err %.3g)\n", t,
                k, ana, num, err);
      }
    }
  }
  /* the thread count must not change a single bit of loss or gradient */
  {
    float *g1 = malloc(sizeof(float) * m->n_params);
    if (!g1) goto cleanup;
    tc_cpu_set_threads(c, 1);
    float l1 = tc_cpu_forward_backward(c, m, &b, o.pos_weight, 1);
    memcpy(g1, m->grads, sizeof(float) * m->n_params);
    tc_cpu_set_threads(c, 3);
    float l3 = tc_cpu_forward_backward(c, m, &b, o.pos_weight, 1);
    if (l1 != l3 || memcmp(g1, m->grads, sizeof(float) * m->n_params) != 0) {
      fprintf(stderr, "FAIL: 1 and 3 threads give different loss/gradients\n");
      bad++;
    }
    free(g1);
  }
  printf("gradcheck: %d parameters checked, %d outside tolerance (rel err 5e-2, h 1e-2)\n", checked,
         bad);
  rc = bad ? 1 : 0;
cleanup:
  tc_synth_free(&y);
  tc_cpu_free(c);
  tc_model_free(m);
  return rc;
}
