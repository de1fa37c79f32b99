/* test_kernels_cpu: every CPU reference kernel against an independent, naive
 * computation on small inputs (seeded; the seed is printed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tc_common.h"
#include "tc_synth.h"
#include "tc_test.h"
#include "twincache_kernels.h"


/* T, W_hat, C and the pair features on a linear SCM with a do() per node */
static void test_features(void) {
  const int G = 5, N = 7, S = 24, F = TWINCACHE_FEATURES;
  tc_synth y;
  if (tc_synth_make(&y, G, N, S, 2, 0.4, 0, 42) != 0) { tc_test_count_failure(); return; }
  const twincache_batch_layout *l = &y.layout;
  uint8_t *s8 = y.slab;
  const float *base = (float *)(s8 + l->base), *inter = (float *)(s8 + l->inter_off);
  const uint8_t *target = s8 + l->target, *nm = s8 + l->node_mask, *im = s8 + l->int_mask;
  size_t gnn = (size_t)G * N * N;
  float *T = malloc(4 * gnn), *C = malloc(4 * gnn), *W = malloc(4 * gnn), *Pc = malloc(4 * gnn);
  float *feat = malloc(4 * gnn * F), *pw = malloc(4 * gnn);
  uint8_t *ob = malloc((size_t)G * N);
  double *te = malloc(sizeof(double) * N * N), *pw_k = malloc(sizeof(double) * N * N),
         *tmp = malloc(sizeof(double) * N * N);
  twincache_effects_cpu(T, ob, base, inter, target, nm, im, NULL, G, N, S, N);
  twincache_corr_cpu(C, base, nm, NULL, 0, G, S, N);
  twincache_inverse_cpu(W, Pc, T, ob, C, nm, G, N);
  twincache_pair_features_cpu(feat, pw, T, ob, C, W, Pc, nm, G, N);
  double pairs = 0, wsum = 0;
  for (int g = 0; g < G; g++) {
    const float *Wt = y.weight + (size_t)g * N * N;
    int n = 0;
    for (int i = 0; i < N; i++) n += nm[g * N + i];
    pairs += n * (n - 1);
    /* total effects by path sums: TE = I + W + W^2 + ... (nilpotent) */
    for (int q = 0; q < N * N; q++) te[q] = (q / N == q % N), pw_k[q] = te[q];
    for (int power = 1; power < N; power++) {
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
          double acc = 0;
          for (int k = 0; k < N; k++) acc += pw_k[i * N + k] * Wt[k * N + j];
          tmp[i * N + j] = acc;
        }
      for (int q = 0; q < N * N; q++) pw_k[q] = tmp[q], te[q] += tmp[q];
    }
    for (int i = 0; i < N; i++) {
      TC_CHECK(ob[g * N + i] == nm[g * N + i], "observed[%d][%d]", g, i);
      for (int j = 0; j < N; j++) {
        size_t p = (size_t)g * N * N + i * N + j;
        double want_t = (nm[g * N + i] && nm[g * N + j]) ? te[i * N + j] : 0.0;
        TC_CHECK(fabs(T[p] - want_t) < 1e-4 * (1 + fabs(want_t)), "T[%d][%d][%d] %g vs %g", g, i,
              j, T[p], want_t);
        double want_w = (i != j) ? Wt[i * N + j] : 0.0;
        TC_CHECK(fabs(W[p] - want_w) < 1e-3 * (1 + fabs(want_w)), "W_hat[%d][%d][%d] %g vs %g", g,
              i, j, W[p], want_w);
        /* correlation, one-pass formula in double */
        double want_c = 0;
        if (nm[g * N + i] && nm[g * N + j]) {
          double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
          for (int s = 0; s < S; s++) {
            double a = base[((size_t)g * S + s) * N + i], b = base[((size_t)g * S + s) * N + j];
            sx += a, sy += b, sxx += a * a, syy += b * b, sxy += a * b;
          }
          double cov = sxy - sx * sy / S, vx = sxx - sx * sx / S, vy = syy - sy * sy / S;
          want_c = cov / sqrt(vx * vy);
        }
        TC_CHECK(fabs(C[p] - want_c) < 1e-4, "C[%d][%d][%d] %g vs %g", g, i, j, C[p], want_c);
        TC_CHECK(fabsf(Pc[p] - Pc[(size_t)g * N * N + j * N + i]) < 1e-5, "Pc symmetric");
        /* features of the pair */
        const float *f = feat + p * F;
        int real = i != j && nm[g * N + i] && nm[g * N + j];
        TC_CHECK(pw[p] == (real ? 1.0f : 0.0f), "pair_w[%zu]", p);
        wsum += pw[p];
        if (!real) {
          for (int q = 0; q < F; q++) TC_CHECK(f[q] == 0.0f, "padding feature %d of pair %zu", q, p);
          continue;
        }
        float clip = TWINCACHE_FEATURE_CLIP;
        TC_CHECK(f[0] == fmaxf(-clip, fminf(clip, T[p])), "f0");
        TC_CHECK(f[1] == fmaxf(-clip, fminf(clip, T[(size_t)g * N * N + j * N + i])), "f1");
        TC_CHECK(f[3] == fmaxf(-clip, fminf(clip, W[p])), "f3");
        TC_CHECK(f[6] == C[p] && f[7] == fabsf(C[p]), "f6/f7");
        TC_CHECK(f[8] == Pc[p], "f8");
        TC_CHECK(f[10] == 1.0f && f[11] == 1.0f, "observed flags");
        float rmax = 0;
        for (int k = 0; k < N; k++)
          if (k != i && nm[g * N + k]) rmax = fmaxf(rmax, fabsf(T[(size_t)g * N * N + i * N + k]));
        TC_CHECK(f[12] == fminf(clip, rmax), "row max %g vs %g", f[12], rmax);
      }
    }
  }
  TC_CHECK(wsum == pairs, "pair weights %g vs real pairs %g", wsum, pairs);
  free(T), free(C), free(W), free(Pc), free(feat), free(pw), free(ob), free(te), free(pw_k),
      free(tmp);
  tc_synth_free(&y);
}

/* partial correlation of a 3-variable correlation matrix vs the textbook formula */
static void test_partial_corr(void) {
  const int N = 3;
  float C[9] = {1, 0.5f, 0.3f, 0.5f, 1, 0.6f, 0.3f, 0.6f, 1}, T[9] = {0}, W[9], Pc[9];
  uint8_t ob[3] = {0, 0, 0}, nm[3] = {1, 1, 1};
  twincache_inverse_cpu(W, Pc, T, ob, C, nm, 1, N);
  double r01 = 0.5, r02 = 0.3, r12 = 0.6;
  double want = (r01 - r02 * r12) / sqrt((1 - r02 * r02) * (1 - r12 * r12));
  TC_CHECK(fabs(Pc[1] - want) < 5e-3, "partial corr %g vs %g", Pc[1], want);
  TC_CHECK(Pc[0] == 0 && W[1] == 0, "diagonal / unobserved W_hat");
}

/* a shift intervention: T is the ratio of mean differences */
static void test_effects_shift(void) {
  const int G = 1, K = 2, S = 3, N = 3;
  float base[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, inter[18];
  uint8_t target[6] = {0, 1, 0, 0, 0, 0}, nm[3] = {1, 1, 1}, im[2] = {1, 0}, ob[3];
  for (int s = 0; s < S; s++) {
    inter[s * N + 0] = base[s * N + 0];
    inter[s * N + 1] = base[s * N + 1] + 2.0f;  /* shift of node 1 by 2 */
    inter[s * N + 2] = base[s * N + 2] - 3.0f;  /* node 2 moves by -1.5 per unit */
  }
  for (int q = 9; q < 18; q++) inter[q] = 123.0f; /* masked intervention: ignored */
  float T[9];
  twincache_effects_cpu(T, ob, base, inter, target, nm, im, NULL, G, K, S, N);
  TC_CHECK(ob[0] == 0 && ob[1] == 1 && ob[2] == 0, "observed %d %d %d", ob[0], ob[1], ob[2]);
  TC_CHECK(fabsf(T[3] - 0) < 1e-6 && T[4] == 1.0f && fabsf(T[5] + 1.5f) < 1e-6, "T row %g %g %g",
        T[3], T[4], T[5]);
  TC_CHECK(T[0] == 0 && T[8] == 0, "unobserved rows are 0");
}

/* Rows per world (FORMAT.md 3.10), answers by hand: the base world holds 4
 * rows, world 0 (do on node 1... a shift by 2, node 2 by -3) only 2; its
 * rows 2-3 are the batch's zero padding, which would pull the slope of node
 * 2 on node 1 away from -1.5 if read. The correlation of a base world that
 * holds 3 of 4 rows: x = 1,2,3 and y = 3,2,1 are -1; with the zero row
 * read they would be +1/5 (1 over sqrt(5 * 5)). */
static void test_features_ignore_padded_rows(void) {
  const int G = 1, K = 2, S = 4, N = 3;
  float base[12] = {1, 2, 3, 4, 5, 7, 7, 8, 9, 10, 11, 15}, inter[24] = {0};
  uint8_t target[6] = {0, 1, 0, 0, 0, 0}, nm[3] = {1, 1, 1}, im[2] = {1, 0}, ob[3];
  uint32_t rows[3] = {4, 2, 0};
  for (int s = 0; s < 2; s++) { /* rows 2-3 of world 0: zero, past its count */
    inter[s * N + 0] = base[s * N + 0];
    inter[s * N + 1] = base[s * N + 1] + 2.0f;
    inter[s * N + 2] = base[s * N + 2] - 3.0f;
  }
  float T[9], T_all[9];
  twincache_effects_cpu(T, ob, base, inter, target, nm, im, rows, G, K, S, N);
  TC_CHECK(ob[1] == 1 && T[4] == 1.0f && T[5] == -1.5f && T[3] == 0.0f, "T row %g %g %g", T[3], T[4], T[5]);
  twincache_effects_cpu(T_all, ob, base, inter, target, nm, im, NULL, G, K, S, N); /* every row: not -1.5 */
  TC_CHECK(fabsf(T_all[5] + 1.5f) > 0.1f, "the padded rows matter when read: %g", T_all[5]);
  /* a twin world holding more rows than base (not a cache's, but the rule):
   * only the rows both hold count */
  uint32_t rows2[3] = {2, 4, 0};
  twincache_effects_cpu(T, ob, base, inter, target, nm, im, rows2, G, K, S, N);
  TC_CHECK(T[5] == -1.5f, "pairs: rows both worlds hold: %g", T[5]);
  /* correlation of the base world over the 3 rows it holds */
  float b2[12] = {1, 3, 0, 2, 2, 0, 3, 1, 0, 0, 0, 0}, C[9];
  uint32_t r3[3] = {3, 0, 0};
  uint8_t nm2[3] = {1, 1, 0};
  twincache_corr_cpu(C, b2, nm2, r3, K + 1, G, S, N);
  TC_CHECK(C[0] == 1.0f && fabsf(C[1] + 1.0f) < 1e-6f && C[2] == 0.0f, "corr %g %g %g", C[0], C[1], C[2]);
  twincache_corr_cpu(C, b2, nm2, NULL, 0, G, S, N);
  TC_CHECK(fabsf(C[1] - 0.2f) < 1e-6f, "the zero row read: %g", C[1]);
}

static double frand(tc_rng *r) { return tc_rng_range(r, -1, 1); }

static void test_mlp(uint64_t seed) {
  tc_rng r;
  tc_rng_init(&r, seed, 1);
  const int P = 7, I = 5, O = 3;
  float in[35], w[15], b[3], out[21], dout[21], din[35], dw[15], db[3];
  for (int q = 0; q < P * I; q++) in[q] = (float)frand(&r);
  for (int q = 0; q < O * I; q++) w[q] = (float)frand(&r);
  for (int q = 0; q < O; q++) b[q] = (float)frand(&r);
  for (int q = 0; q < P * O; q++) dout[q] = (float)frand(&r);
  twincache_linear_forward_cpu(out, in, w, b, P, I, O);
  twincache_linear_backward_cpu(din, dw, db, dout, in, w, P, I, O);
  for (int p = 0; p < P; p++)
    for (int o = 0; o < O; o++) {
      double acc = b[o];
      for (int i = 0; i < I; i++) acc += (double)in[p * I + i] * w[o * I + i];
      TC_CHECK(fabs(out[p * O + o] - acc) < 1e-5, "linear forward");
    }
  for (int p = 0; p < P; p++)
    for (int i = 0; i < I; i++) {
      double acc = 0;
      for (int o = 0; o < O; o++) acc += (double)dout[p * O + o] * w[o * I + i];
      TC_CHECK(fabs(din[p * I + i] - acc) < 1e-5, "linear din");
    }
  for (int o = 0; o < O; o++) {
    double accb = 0;
    for (int p = 0; p < P; p++) accb += dout[p * O + o];
    TC_CHECK(fabs(db[o] - accb) < 1e-5, "linear db");
    for (int i = 0; i < I; i++) {
      double acc = 0;
      for (int p = 0; p < P; p++) acc += (double)dout[p * O + o] * in[p * I + i];
      TC_CHECK(fabs(dw[o * I + i] - acc) < 1e-5, "linear dw");
    }
  }
  /* GELU: known values and the derivative against a central difference */
  float x[5] = {-3, -0.5f, 0, 0.7f, 2.5f}, y[5], ones[5] = {1, 1, 1, 1, 1}, g[5];
  twincache_gelu_forward_cpu(y, x, 5);
  twincache_gelu_backward_cpu(g, x, ones, 5);
  TC_CHECK(y[2] == 0.0f && fabsf(y[4] - 2.4849f) < 1e-3 && fabsf(y[0] + 0.00364f) < 1e-4,
        "gelu values %g %g", y[4], y[0]);
  for (int q = 0; q < 5; q++) {
    double h = 1e-3, xp = x[q] + h, xm = x[q] - h, k = 0.7978845608028654;
    double fp = 0.5 * xp * (1 + tanh(k * (xp + 0.044715 * xp * xp * xp)));
    double fm = 0.5 * xm * (1 + tanh(k * (xm + 0.044715 * xm * xm * xm)));
    TC_CHECK(fabs(g[q] - (fp - fm) / (2 * h)) < 1e-4, "gelu' at %g: %g vs %g", x[q], g[q],
          (fp - fm) / (2 * h));
  }
}

static void test_bce(void) {
  float logit[4] = {2.0f, -1.0f, 0.5f, 9.0f}, w[4] = {1, 1, 1, 0}, d[4];
  uint8_t adj[4] = {1, 0, 0, 1};
  float loss = twincache_bce_cpu(d, logit, adj, w, 4, 2.0f);
  double want = (2 * log1p(exp(-2.0)) + log1p(exp(-1.0)) + log1p(exp(0.5))) / 3;
  TC_CHECK(fabs(loss - want) < 1e-6, "bce loss %g vs %g", loss, want);
  double s0 = 1 / (1 + exp(-2.0)), s1 = 1 / (1 + exp(1.0));
  TC_CHECK(fabs(d[0] - 2 * (s0 - 1) / 3) < 1e-6 && fabs(d[1] - s1 / 3) < 1e-6 && d[3] == 0.0f,
        "bce grad");
  float z[1] = {0}, w0[1] = {0};
  uint8_t a0[1] = {1};
  TC_CHECK(twincache_bce_cpu(d, z, a0, w0, 1, 1.0f) == 0.0f && d[0] == 0.0f, "all-masked bce");
}

static void test_adamw(void) {
  float p[2] = {1.0f, -2.0f}, g[2] = {0.5f, -0.1f}, m[2] = {0, 0}, v[2] = {0, 0};
  /* step 1: mhat = g, vhat = g^2, so the update is lr*(sign(g)*~1 + wd*p) */
  twincache_adamw_cpu(p, g, m, v, 2, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f, 1);
  double want0 = 1.0 - 0.1 * (0.5 / (0.5 + 1e-8) + 0.01 * 1.0);
  double want1 = -2.0 - 0.1 * (-0.1 / (0.1 + 1e-8) + 0.01 * -2.0);
  TC_CHECK(fabs(p[0] - want0) < 1e-6 && fabs(p[1] - want1) < 1e-6, "adamw step 1: %g %g",
        p[0], p[1]);
  TC_CHECK(fabsf(m[0] - 0.05f) < 1e-7 && fabsf(v[0] - 0.00025f) < 1e-8, "adamw moments");
  /* step 2 with gradient 0.2 on p[0], by hand */
  float g2[2] = {0.2f, 0.0f};
  double p0 = p[0];
  twincache_adamw_cpu(p, g2, m, v, 2, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f, 2);
  double m2 = 0.9 * 0.05 + 0.1 * 0.2, v2 = 0.999 * 0.00025 + 0.001 * 0.04;
  double mh = m2 / (1 - 0.81), vh = v2 / (1 - 0.999 * 0.999);
  double want = p0 - 0.1 * (mh / (sqrt(vh) + 1e-8) + 0.01 * p0);
  TC_CHECK(fabs(p[0] - want) < 1e-5, "adamw step 2: %g vs %g", p[0], want);
}

/* Two ranks' mean gradients and losses (pair weights 3 and 1) combine as
 * one batch's: weighted, summed, divided by the summed weight. */
static void test_grad_weight(void) {
  float a[2] = {1.0f, -2.0f}, b[2] = {5.0f, 2.0f}, loss_a = 0.5f, loss_b = 0.25f, loss = 0;
  twincache_grad_weight_cpu(a, 2, 3.0);
  twincache_grad_weight_cpu(b, 2, 1.0);
  TC_CHECK(a[0] == 3.0f && a[1] == -6.0f && b[0] == 5.0f, "weighted: %g %g %g", a[0], a[1], b[0]);
  float sum[2] = {a[0] + b[0], a[1] + b[1]};
  double tot[2] = {3.0 + 1.0, loss_a * 3.0 + loss_b * 1.0};
  twincache_grad_unweight_cpu(sum, 2, tot, &loss);
  TC_CHECK(sum[0] == 2.0f && sum[1] == -1.0f, "global mean gradient: %g %g", sum[0], sum[1]);
  TC_CHECK(loss == 0.4375f, "global loss %g, want 0.4375 (not the mean of means 0.375)", loss);
  double none[2] = {0.0, 0.0};
  twincache_grad_unweight_cpu(sum, 2, none, &loss); /* no weighted pair anywhere */
  TC_CHECK(sum[0] == 0.0f && sum[1] == 0.0f && loss == 0.0f, "zero weight: %g %g %g", sum[0], sum[1], loss);
}

int main(void) {
  uint64_t seed = tc_now_ns();
  printf("test_kernels_cpu: seed %llu\n", (unsigned long long)seed);
  test_features();
  test_partial_corr();
  test_effects_shift();
  test_features_ignore_padded_rows();
  test_mlp(seed);
  test_bce();
  test_adamw();
  test_grad_weight();
  if (tc_test_failures()) fprintf(stderr, "%d check(s) failed\n", tc_test_failures());
  else printf("all CPU kernel checks passed\n");
  return tc_test_failures() ? 1 : 0;
}
