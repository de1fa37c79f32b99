/* tc_args.c — the one command-line parser (see tc_args.h). */
#include "tc_args.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int tc_parse_u64_in(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
  uint64_t v = 0;
  if (!s || !*s) return -1;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) return -1; /* would pass 2^64 - 1 */
    v = v * 10 + d;
  }
  if (v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int tc_parse_u32_in(const char *s, uint32_t lo, uint32_t hi, uint32_t *out) {
  uint64_t v;
  if (tc_parse_u64_in(s, lo, hi, &v)) return -1;
  *out = (uint32_t)v;
  return 0;
}

/* [+-]digits[.digits] or [+-].digits, then optionally e[+-]digits. */
static int is_decimal_number(const char *s) {
  const char *p = s;
  int mantissa_digits = 0;
  if (*p == '+' || *p == '-') p++;
  while (*p >= '0' && *p <= '9') p++, mantissa_digits++;
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') p++, mantissa_digits++;
  }
  if (!mantissa_digits) return 0;
  if (*p == 'e' || *p == 'E') {
    int exp_digits = 0;
    p++;
    if (*p == '+' || *p == '-') p++;
    while (*p >= '0' && *p <= '9') p++, exp_digits++;
    if (!exp_digits) return 0;
  }
  return *p == '\0';
}

int tc_parse_f64_in(const char *s, double lo, double hi, int open, double *out) {
  if (!s || !is_decimal_number(s)) return -1;
  errno = 0;
  char *end = NULL;
  double x = strtod(s, &end);
  if (errno == ERANGE || !end || *end || !isfinite(x)) return -1;
  if (x < lo || x > hi || ((open & TC_OPEN_LO) && x == lo) || ((open & TC_OPEN_HI) && x == hi))
    return -1;
  *out = x;
  return 0;
}

void tc_expect_u64(char *buf, size_t cap, uint64_t lo, uint64_t hi) {
  snprintf(buf, cap, "an integer in [%" PRIu64 ", %" PRIu64 "]", lo, hi);
}

void tc_expect_f64(char *buf, size_t cap, double lo, double hi, int open) {
  snprintf(buf, cap, "a number in %c%g, %g%c", (open & TC_OPEN_LO) ? '(' : '[', lo, hi,
           (open & TC_OPEN_HI) ? ')' : ']');
}

/* ---- one value ------------------------------------------------------------ */
static void expect_text(const tc_opt *o, char *buf, size_t cap) {
  char one[128];
  if (o->expect) {
    snprintf(buf, cap, "%s", o->expect);
    return;
  }
  switch (o->kind) {
  case TC_OPT_U32:
  case TC_OPT_U64:
  case TC_OPT_INT:
    tc_expect_u64(buf, cap, o->lo, o->hi);
    break;
  case TC_OPT_F64:
    tc_expect_f64(buf, cap, o->flo, o->fhi, o->open);
    break;
  case TC_OPT_U32_PAIR:
    tc_expect_u64(one, sizeof one, o->lo, o->hi);
    snprintf(buf, cap, "LO:HI, each %s, LO <= HI", one);
    break;
  case TC_OPT_F64_PAIR:
    tc_expect_f64(one, sizeof one, o->flo, o->fhi, o->open);
    snprintf(buf, cap, "LO:HI, each %s, LO <= HI", one);
    break;
  case TC_OPT_CHOICE: {
    size_t used = (size_t)snprintf(buf, cap, "one of");
    for (int i = 0; o->choices && o->choices[i] && used < cap; i++)
      used += (size_t)snprintf(buf + used, cap - used, "%s %s", i ? "," : "", o->choices[i]);
    break;
  }
  default:
    snprintf(buf, cap, "a non-empty value");
  }
}

/* Splits "LO:HI" at the first ':' into a[cap] and *hi. */
static int split_pair(const char *v, char *a, size_t cap, const char **hi) {
  const char *colon = strchr(v, ':');
  if (!colon || (size_t)(colon - v) >= cap) return -1;
  memcpy(a, v, (size_t)(colon - v));
  a[colon - v] = '\0';
  *hi = colon + 1;
  return 0;
}

static int set_value(const tc_opt *o, const char *v) {
  char a[64];
  const char *b;
  switch (o->kind) {
  case TC_OPT_SWITCH:
    *(int *)o->dst = 1;
    return 0;
  case TC_OPT_STRING:
    if (!*v) return -1;
    *(const char **)o->dst = v;
    return 0;
  case TC_OPT_U32:
    if (o->hi > UINT32_MAX) return -1; /* a table error: refuse rather than truncate */
    return tc_parse_u32_in(v, (uint32_t)o->lo, (uint32_t)o->hi, (uint32_t *)o->dst);
  case TC_OPT_U64:
    return tc_parse_u64_in(v, o->lo, o->hi, (uint64_t *)o->dst);
  case TC_OPT_INT: {
    uint64_t x;
    if (o->hi > INT_MAX || tc_parse_u64_in(v, o->lo, o->hi, &x)) return -1;
    *(int *)o->dst = (int)x;
    return 0;
  }
  case TC_OPT_F64:
    return tc_parse_f64_in(v, o->flo, o->fhi, o->open, (double *)o->dst);
  case TC_OPT_U32_PAIR: {
    uint32_t x, y;
    if (o->hi > UINT32_MAX) return -1;
    if (split_pair(v, a, sizeof a, &b) || tc_parse_u32_in(a, (uint32_t)o->lo, (uint32_t)o->hi, &x) ||
        tc_parse_u32_in(b, (uint32_t)o->lo, (uint32_t)o->hi, &y) || y < x)
      return -1;
    *(uint32_t *)o->dst = x, *(uint32_t *)o->dst2 = y;
    return 0;
  }
  case TC_OPT_F64_PAIR: {
    double x, y;
    if (split_pair(v, a, sizeof a, &b) || tc_parse_f64_in(a, o->flo, o->fhi, o->open, &x) ||
        tc_parse_f64_in(b, o->flo, o->fhi, o->open, &y) || y < x)
      return -1;
    *(double *)o->dst = x, *(double *)o->dst2 = y;
    return 0;
  }
  case TC_OPT_CHOICE:
    for (int i = 0; o->choices && o->choices[i]; i++)
      if (!strcmp(v, o->choices[i])) {
        *(int *)o->dst = i;
        return 0;
      }
    return -1;
  case TC_OPT_CUSTOM:
    return o->parse ? o->parse(v, o) : -1;
  }
  return -1;
}

/* ---- the loop --------------------------------------------------------------- */
static tc_args_status fail(tc_args_error *err, tc_args_status st, const tc_opt *o,
                           const char *name, size_t name_len, const char *value) {
  if (name_len >= sizeof err->name) name_len = sizeof err->name - 1;
  memcpy(err->name, name, name_len);
  err->name[name_len] = '\0';
  err->status = st;
  err->opt = o;
  err->value = value;
  if (st == TC_ARGS_BAD_VALUE && o) expect_text(o, err->expect, sizeof err->expect);
  return st;
}

static int looks_negative_number(const char *a) {
  return a[0] == '-' && ((a[1] >= '0' && a[1] <= '9') || a[1] == '.');
}

tc_args_status tc_args_parse_pos(int argc, char *const *argv, const tc_opt *opts, size_t n,
                                 const char **pos, int max_pos, int *n_pos, tc_args_error *err) {
  int flags_done = 0, n_given = 0;
  memset(err, 0, sizeof *err);
  if (n_pos) *n_pos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!flags_done && max_pos > 0 && !strcmp(a, "--")) {
      flags_done = 1;
      continue;
    }
    int is_flag = !flags_done && a[0] == '-' && a[1] != '\0' && !looks_negative_number(a);
    if (max_pos == 0) is_flag = strncmp(a, "--", 2) == 0 || !strcmp(a, "-h");
    if (!is_flag) {
      if (n_given >= max_pos) return fail(err, TC_ARGS_POSITIONAL, NULL, a, strlen(a), NULL);
      pos[n_given++] = a;
      if (n_pos) *n_pos = n_given;
      continue;
    }
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) return err->status = TC_ARGS_HELP;
    if (a[1] != '-') return fail(err, TC_ARGS_UNKNOWN, NULL, a, strlen(a), NULL);
    const char *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    const tc_opt *o = NULL;
    for (size_t k = 0; k < n && !o; k++)
      if (opts[k].name && strlen(opts[k].name) == len && !strncmp(opts[k].name, a, len)) o = &opts[k];
    if (!o) return fail(err, TC_ARGS_UNKNOWN, NULL, a, len, NULL);
    const char *v = NULL;
    if (o->kind == TC_OPT_SWITCH) {
      if (eq) return fail(err, TC_ARGS_SWITCH_VALUE, o, a, len, eq + 1);
    } else if (eq) {
      v = eq + 1;
    } else if (i + 1 < argc) {
      v = argv[++i];
    } else {
      return fail(err, TC_ARGS_NO_VALUE, o, a, len, NULL);
    }
    if (set_value(o, v)) return fail(err, TC_ARGS_BAD_VALUE, o, a, len, v);
    if (o->seen) *o->seen = i;
  }
  return TC_ARGS_OK;
}

tc_args_status tc_args_parse(int argc, char *const *argv, const tc_opt *opts, size_t n,
                             tc_args_error *err) {
  return tc_args_parse_pos(argc, argv, opts, n, NULL, 0, NULL, err);
}

/* ---- --help ------------------------------------------------------------------- */
static void default_text(const tc_opt *o, char *buf, size_t cap) {
  buf[0] = '\0';
  if (o->def) {
    snprintf(buf, cap, "%s", o->def);
    return;
  }
  if (!o->dst) return;
  switch (o->kind) {
  case TC_OPT_SWITCH: snprintf(buf, cap, "%s", *(const int *)o->dst ? "on" : "off"); break;
  case TC_OPT_STRING: {
    const char *s = *(const char *const *)o->dst;
    snprintf(buf, cap, "%s", s ? s : "none");
    break;
  }
  case TC_OPT_U32: snprintf(buf, cap, "%" PRIu32, *(const uint32_t *)o->dst); break;
  case TC_OPT_U64: snprintf(buf, cap, "%" PRIu64, *(const uint64_t *)o->dst); break;
  case TC_OPT_INT: snprintf(buf, cap, "%d", *(const int *)o->dst); break;
  case TC_OPT_F64: snprintf(buf, cap, "%g", *(const double *)o->dst); break;
  case TC_OPT_U32_PAIR:
    snprintf(buf, cap, "%" PRIu32 ":%" PRIu32, *(const uint32_t *)o->dst, *(const uint32_t *)o->dst2);
    break;
  case TC_OPT_F64_PAIR:
    snprintf(buf, cap, "%g:%g", *(const double *)o->dst, *(const double *)o->dst2);
    break;
  case TC_OPT_CHOICE: {
    int i = *(const int *)o->dst, k = 0;
    while (o->choices && o->choices[k] && k < i) k++;
    snprintf(buf, cap, "%s", o->choices && o->choices[k] ? o->choices[k] : "?");
    break;
  }
  case TC_OPT_CUSTOM: break;
  }
}

void tc_args_help(FILE *f, const tc_opt *opts, size_t n, int column) {
  for (size_t k = 0; k < n; k++) {
    const tc_opt *o = &opts[k];
    if (!o->name) {
      fprintf(f, "%s\n", o->help ? o->help : "");
      continue;
    }
    if (!o->help) continue;
    int w = fprintf(f, "  %s%s%s", o->name, o->meta ? " " : "", o->meta ? o->meta : "");
    fprintf(f, "%*s", column - w < 2 ? 2 : column - w, ""); /* two spaces at least */
    char def[96];
    default_text(o, def, sizeof def);
    for (const char *p = o->help; *p; p++) {
      if (p[0] == '{' && p[1] == '}') {
        fputs(def, f);
        p++;
      } else if (*p == '\n') {
        fprintf(f, "\n%*s", column, "");
      } else {
        fputc(*p, f);
      }
    }
    fputc('\n', f);
  }
}

int tc_args_report(FILE *f, const char *prog, const tc_args_error *e) {
  switch (e->status) {
  case TC_ARGS_OK:
  case TC_ARGS_HELP: return 0;
  case TC_ARGS_UNKNOWN: fprintf(f, "%s: %s: unknown flag (see --help)\n", prog, e->name); break;
  case TC_ARGS_POSITIONAL: fprintf(f, "%s: unexpected argument '%s' (see --help)\n", prog, e->name); break;
  case TC_ARGS_NO_VALUE: fprintf(f, "%s: %s: needs a value (see --help)\n", prog, e->name); break;
  case TC_ARGS_SWITCH_VALUE:
    fprintf(f, "%s: %s: takes no value, got '%s' (see --help)\n", prog, e->name, e->value ? e->value : "");
    break;
  case TC_ARGS_BAD_VALUE: return tc_args_report_value(f, prog, e->name, e->value, e->expect);
  }
  return 2;
}

int tc_args_report_value(FILE *f, const char *prog, const char *flag, const char *value, const char *expect) {
  fprintf(f, "%s: %s: expected %s, got '%s' (see --help)\n", prog, flag, expect, value ? value : "");
  return 2;
}
