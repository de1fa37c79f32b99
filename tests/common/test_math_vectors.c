/* test_math_vectors — the spec and the code cannot drift (issue 35):
 * formats/FORMAT.md 3.8.1 gives scm's constants as bits and test vectors
 * of its ln, exp (doubles), tanh and cos (floats). This program reads those
 * table rows from FORMAT.md itself (section 3.8.1 only) and checks
 *   "| double | 1/19 | 0x3faaf286bca1af28 |"  the constant as C evaluates it
 *                                             (a quotient: one division in the
 *                                             type; a decimal: the nearest value)
 *   "| ln | 0x3fe0... (0.5) | 0xbfe6... |"    tc_math_log(input) has the output bits
 * and that every kind of row is there (a lost table fails, not passes).
 * usage: test_math_vectors FORMAT.md */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_math.h"
#include "tc_test.h"

static uint64_t bits64(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static uint32_t bits32(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static double from64(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}
static float from32(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* The cells of a "| a | b | c |" row into cell[3] (trimmed, in place); 1 when
 * the row has exactly three cells. */
static int cells(char *line, char *cell[3]) {
  if (line[0] != '|') return 0;
  int n = 0;
  char *p = line + 1;
  while (n < 4) {
    char *bar = strchr(p, '|');
    if (!bar) break;
    *bar = '\0';
    while (*p == ' ') p++;
    char *end = bar;
    while (end > p && end[-1] == ' ') *--end = '\0';
    if (n < 3) cell[n] = p;
    n++;
    p = bar + 1;
  }
  return n == 3;
}

/* A value cell: "1/19", "−1/87178291200" (U+2212 or '-'), "1.90821e−10". The
 * minus sign written as U+2212 becomes '-' in out[cap]. */
static void ascii_minus(const char *in, char *out, size_t cap) {
  size_t o = 0;
  for (size_t i = 0; in[i] && o + 1 < cap; i++) {
    if ((unsigned char)in[i] == 0xe2 && (unsigned char)in[i + 1] == 0x88 && (unsigned char)in[i + 2] == 0x92) {
      out[o++] = '-';
      i += 2;
    } else {
      out[o++] = in[i];
    }
  }
  out[o] = '\0';
}

/* One constant row: the value as C evaluates the code's expression of it. */
static void check_constant(const char *type, const char *value, const char *want_hex, int line) {
  char v[128];
  ascii_minus(value, v, sizeof v);
  char *slash = strchr(v, '/'), *end = NULL;
  unsigned long long want = strtoull(want_hex, &end, 16);
  TC_REQUIRE(end && *end == '\0' && end != want_hex, "FORMAT.md line %d: bits '%s'", line, want_hex);
  if (!strcmp(type, "double")) {
    double x = slash ? strtod(v, NULL) / strtod(slash + 1, NULL) : strtod(v, NULL);
    TC_CHECK(bits64(x) == want, "FORMAT.md line %d: double %s is 0x%016llx, the table says %s", line, value,
             (unsigned long long)bits64(x), want_hex);
  } else if (!strcmp(type, "float")) {
    /* as `1.0f / 87178291200.0f`: each number the nearest float, then one float division */
    float x = slash ? (float)strtod(v, NULL) / (float)strtod(slash + 1, NULL) : strtof(v, NULL);
    TC_CHECK(bits32(x) == want, "FORMAT.md line %d: float %s is 0x%08x, the table says %s", line, value,
             bits32(x), want_hex);
  } else {
    TC_FAIL("FORMAT.md line %d: type '%s'", line, type);
  }
}

/* One vector row: the leading 0x... of the input and output cells. */
static void check_vector(const char *fn, const char *in, const char *out, int line) {
  char *e1 = NULL, *e2 = NULL;
  unsigned long long x = strtoull(in, &e1, 16), y = strtoull(out, &e2, 16);
  TC_REQUIRE(!strncmp(in, "0x", 2) && !strncmp(out, "0x", 2) && e1 != in && e2 != out,
             "FORMAT.md line %d: '%s' -> '%s'", line, in, out);
  if (!strcmp(fn, "ln") || !strcmp(fn, "exp")) {
    double got = !strcmp(fn, "ln") ? tc_math_log(from64(x)) : tc_math_exp(from64(x));
    TC_CHECK(bits64(got) == y, "FORMAT.md line %d: %s(0x%016llx) is 0x%016llx (%.17g), the table says 0x%016llx",
             line, fn, x, (unsigned long long)bits64(got), got, y);
  } else {
    float got = !strcmp(fn, "tanh") ? tc_math_tanhf(from32((uint32_t)x)) : tc_math_cosf(from32((uint32_t)x));
    TC_CHECK(bits32(got) == y, "FORMAT.md line %d: %s(0x%08llx) is 0x%08x (%.9g), the table says 0x%08llx", line,
             fn, x, bits32(got), got, y);
  }
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2, "usage: test_math_vectors FORMAT.md");
  FILE *f = fopen(argv[1], "r");
  TC_REQUIRE(f != NULL, "cannot open %s", argv[1]);
  char line[1024];
  int n = 0, doubles = 0, floats = 0, ln = 0, exps = 0, tanhs = 0, coss = 0, in_section = 0;
  while (fgets(line, sizeof line, f)) {
    n++;
    line[strcspn(line, "\r\n")] = '\0';
    /* only section 3.8.1's rows: other tables of the file are not these */
    if (line[0] == '#') in_section = !strncmp(line, "#### 3.8.1 ", 11);
    char *c[3];
    if (!in_section || !cells(line, c)) continue;
    if (!strcmp(c[0], "double") || !strcmp(c[0], "float")) {
      check_constant(c[0], c[1], c[2], n);
      if (!strcmp(c[0], "double")) doubles++;
      else floats++;
    } else if (!strcmp(c[0], "ln") || !strcmp(c[0], "exp") || !strcmp(c[0], "tanh") || !strcmp(c[0], "cos")) {
      check_vector(c[0], c[1], c[2], n);
      if (!strcmp(c[0], "ln")) ln++;
      else if (!strcmp(c[0], "exp")) exps++;
      else if (!strcmp(c[0], "tanh")) tanhs++;
      else coss++;
    }
  }
  fclose(f);
  /* the tables as written (3.8.1): a row lost or a table renamed fails here */
  TC_CHECK(doubles >= 24 && floats >= 13, "constants found: %d double, %d float", doubles, floats);
  TC_CHECK(ln >= 9 && exps >= 9 && tanhs >= 6 && coss >= 6, "vectors found: ln %d, exp %d, tanh %d, cos %d", ln,
           exps, tanhs, coss);
  printf("math vectors: %d double and %d float constants, %d ln, %d exp, %d tanh, %d cos rows of %s\n", doubles,
         floats, ln, exps, tanhs, coss, argv[1]);
  return tc_test_finish("math_vectors");
}
