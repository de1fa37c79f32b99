/* test_args — common/tc_args: the strict number parsers (every hostile
 * spelling refused, the exact range ends accepted, nothing written on
 * refusal), the flag table (--flag V, --flag=V, switches, positionals, each
 * error status with the flag's name and the expected range), the --help
 * listing with defaults, and common/tc_checked.h at the 2^64 edge. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_args.h"
#include "tc_test.h"
#include "tc_checked.h"


static void numbers(void) {
  /* refused: sign, junk, empty, spaces, hex, exponent, 2^64 and beyond */
  const char *bad_u64[] = {"", "-1", "-0", "+5", " 5", "5 ", "0x10", "1e3", "12abc", "1.0",
                           "18446744073709551616", "99999999999999999999", "184467440737095516150",
                           "\t7", NULL};
  for (int i = 0; bad_u64[i]; i++) {
    uint64_t v = 42;
    TC_CHECK(tc_parse_u64_in(bad_u64[i], 0, UINT64_MAX, &v) == -1 && v == 42, "'%s' accepted", bad_u64[i]);
  }
  uint64_t v = 0;
  TC_CHECK(tc_parse_u64_in(NULL, 0, 10, &v) == -1, "NULL accepted");
  TC_CHECK(tc_parse_u64_in("18446744073709551615", 0, UINT64_MAX, &v) == 0 && v == UINT64_MAX, "2^64-1");
  TC_CHECK(tc_parse_u64_in("18446744073709551417", 0, UINT64_MAX, &v) == 0 && v == 18446744073709551417ull,
        "2^64-199");
  TC_CHECK(tc_parse_u64_in("18446744073709551417", 0, 1ull << 60, &v) == -1, "2^64-199 above a range");
  TC_CHECK(tc_parse_u64_in("007", 0, 10, &v) == 0 && v == 7, "leading zeros");
  TC_CHECK(tc_parse_u64_in("0", 0, 0, &v) == 0 && v == 0, "zero");
  TC_CHECK(tc_parse_u64_in("4", 5, 9, &v) == -1 && tc_parse_u64_in("10", 5, 9, &v) == -1, "range ends");
  TC_CHECK(tc_parse_u64_in("5", 5, 9, &v) == 0 && tc_parse_u64_in("9", 5, 9, &v) == 0 && v == 9, "range ends in");
  uint32_t w = 3;
  TC_CHECK(tc_parse_u32_in("4294967296", 0, UINT32_MAX, &w) == -1 && w == 3, "2^32");
  TC_CHECK(tc_parse_u32_in("4294967295", 0, UINT32_MAX, &w) == 0 && w == UINT32_MAX, "2^32-1");

  const char *bad_f64[] = {"", "abc", "nan", "inf", "-inf", "0x1p3", " 1", "1 ", "1e", "e5", ".",
                           "-", "1e999", "1.5.2", "--1", NULL};
  for (int i = 0; bad_f64[i]; i++) {
    double d = 42;
    TC_CHECK(tc_parse_f64_in(bad_f64[i], -1e300, 1e300, 0, &d) == -1 && d == 42, "'%s' accepted", bad_f64[i]);
  }
  double d = 0;
  TC_CHECK(tc_parse_f64_in("-0.5", -1, 1, 0, &d) == 0 && d == -0.5, "-0.5");
  TC_CHECK(tc_parse_f64_in(".5e-1", 0, 1, 0, &d) == 0 && d == 0.05, ".5e-1");
  TC_CHECK(tc_parse_f64_in("+3", 0, 10, 0, &d) == 0 && d == 3, "+3");
  TC_CHECK(tc_parse_f64_in("0", 0, 1, TC_OPEN_LO, &d) == -1, "open low end");
  TC_CHECK(tc_parse_f64_in("1", 0, 1, TC_OPEN_HI, &d) == -1, "open high end");
  TC_CHECK(tc_parse_f64_in("1", 0, 1, TC_OPEN_LO, &d) == 0 && d == 1, "closed high end");
  char buf[96];
  tc_expect_u64(buf, sizeof buf, 1, 4096);
  TC_CHECK(!strcmp(buf, "an integer in [1, 4096]"), "%s", buf);
  tc_expect_f64(buf, sizeof buf, 0, 10, TC_OPEN_LO);
  TC_CHECK(!strcmp(buf, "a number in (0, 10]"), "%s", buf);
}

typedef struct cfg {
  const char *out;
  uint64_t graphs;
  uint32_t lo, hi;
  double p, a, b;
  int level, quiet, model, graphs_seen;
  uint32_t custom;
} cfg;

static const char *const k_models[] = {"er", "ba", "ws", NULL};
static int parse_custom(const char *v, const tc_opt *o) {
  if (!strcmp(v, "all")) return *(uint32_t *)o->dst = 0, 0;
  return tc_parse_u32_in(v, 1, 9, (uint32_t *)o->dst);
}

static size_t table(cfg *c, tc_opt *o) {
  const tc_opt t[] = {
      {.name = "--out", .meta = "DIR", .kind = TC_OPT_STRING, .dst = &c->out, .help = "where"},
      {.name = "--graphs", .meta = "N", .kind = TC_OPT_U64, .dst = &c->graphs, .hi = 1ull << 60,
       .seen = &c->graphs_seen, .help = "how many (default {})"},
      {.help = "section:"},
      {.name = "--nodes", .meta = "LO:HI", .kind = TC_OPT_U32_PAIR, .dst = &c->lo, .dst2 = &c->hi,
       .lo = 1, .hi = 256, .help = "nodes (default {})"},
      {.name = "--p", .meta = "P", .kind = TC_OPT_F64, .dst = &c->p, .fhi = 1, .help = "p (default {})"},
      {.name = "--range", .meta = "A:B", .kind = TC_OPT_F64_PAIR, .dst = &c->a, .dst2 = &c->b,
       .flo = -1, .fhi = 1, .help = "a range\nsecond line"},
      {.name = "--level", .meta = "L", .kind = TC_OPT_INT, .dst = &c->level, .lo = 1, .hi = 19,
       .help = "level (default {})"},
      {.name = "--model", .meta = "M", .kind = TC_OPT_CHOICE, .dst = &c->model, .choices = k_models,
       .help = "model (default {})"},
      {.name = "--k", .meta = "all|K", .kind = TC_OPT_CUSTOM, .dst = &c->custom, .parse = parse_custom,
       .def = "all", .help = "k (default {})"},
      {.name = "--quiet", .kind = TC_OPT_SWITCH, .dst = &c->quiet, .help = "quiet"},
  };
  memcpy(o, t, sizeof t);
  return sizeof t / sizeof t[0];
}

static tc_args_status parse(cfg *c, tc_args_error *e, const char **argv_tail) {
  char *argv[32];
  int argc = 0;
  tc_opt o[16];
  memset(c, 0, sizeof *c);
  c->graphs = 1000, c->lo = 5, c->hi = 10, c->p = 0.3, c->level = 1, c->model = 1, c->custom = 7;
  size_t n = table(c, o);
  argv[argc++] = "prog";
  for (int i = 0; argv_tail[i]; i++) argv[argc++] = (char *)argv_tail[i];
  argv[argc] = NULL;
  tc_args_status st = tc_args_parse(argc, argv, o, n, e);
  if (e->opt) e->opt = NULL; /* points into o[], gone after return */
  return st;
}

static void flags(void) {
  cfg c;
  tc_args_error e;
  {
    const char *a[] = {"--out", "d", "--graphs=12", "--nodes", "3:4", "--p", "0.5", "--range=-1:0.5",
                       "--level", "19", "--model", "ws", "--k", "all", "--quiet", NULL};
    TC_CHECK(parse(&c, &e, a) == TC_ARGS_OK, "good line: status %d", e.status);
    TC_CHECK(!strcmp(c.out, "d") && c.graphs == 12 && c.lo == 3 && c.hi == 4 && c.p == 0.5 && c.a == -1 &&
              c.b == 0.5 && c.level == 19 && c.model == 2 && c.custom == 0 && c.quiet == 1,
          "values");
    TC_CHECK(c.graphs_seen == 3, "seen position %d", c.graphs_seen); /* argv[3] = "--graphs=12" */
  }
  /* every hostile value for --graphs: BAD_VALUE naming the flag and the range, value untouched */
  const char *hostile[] = {"-1", "18446744073709551616", "18446744073709551417", "1e3", "", "0x10", "5x", NULL};
  for (int i = 0; hostile[i]; i++) {
    const char *a[] = {"--graphs", hostile[i], NULL};
    TC_CHECK(parse(&c, &e, a) == TC_ARGS_BAD_VALUE, "'%s': status %d", hostile[i], e.status);
    TC_CHECK(!strcmp(e.name, "--graphs") && e.value && !strcmp(e.value, hostile[i]), "name %s", e.name);
    TC_CHECK(!strcmp(e.expect, "an integer in [0, 1152921504606846976]"), "expect %s", e.expect);
    TC_CHECK(c.graphs == 1000, "'%s' changed the value", hostile[i]);
  }
  {
    const char *a[] = {"--graphs=-3", NULL};
    TC_CHECK(parse(&c, &e, a) == TC_ARGS_BAD_VALUE && !strcmp(e.name, "--graphs") && !strcmp(e.value, "-3"),
          "--graphs=-3");
  }
  struct { const char *a[4]; tc_args_status st; const char *name; } cases[] = {
      {{"--nodes", "10:5", NULL}, TC_ARGS_BAD_VALUE, "--nodes"},
      {{"--nodes", "0:5", NULL}, TC_ARGS_BAD_VALUE, "--nodes"},
      {{"--nodes", "5", NULL}, TC_ARGS_BAD_VALUE, "--nodes"},
      {{"--nodes", "5:4294967301", NULL}, TC_ARGS_BAD_VALUE, "--nodes"},
      {{"--p", "nan", NULL}, TC_ARGS_BAD_VALUE, "--p"},
      {{"--range", "0.5:-1", NULL}, TC_ARGS_BAD_VALUE, "--range"},
      {{"--level", "2147483648", NULL}, TC_ARGS_BAD_VALUE, "--level"},
      {{"--model", "gp", NULL}, TC_ARGS_BAD_VALUE, "--model"},
      {{"--k", "10", NULL}, TC_ARGS_BAD_VALUE, "--k"},
      {{"--out", "", NULL}, TC_ARGS_BAD_VALUE, "--out"},
      {{"--bogus", "1", NULL}, TC_ARGS_UNKNOWN, "--bogus"},
      {{"--bogus=1", NULL}, TC_ARGS_UNKNOWN, "--bogus"},
      {{"--graphs", NULL}, TC_ARGS_NO_VALUE, "--graphs"},
      {{"--quiet=yes", NULL}, TC_ARGS_SWITCH_VALUE, "--quiet"},
      {{"stray", NULL}, TC_ARGS_POSITIONAL, "stray"},
      {{"-x", NULL}, TC_ARGS_POSITIONAL, "-x"},
      {{"--graphs", "5", "--help", NULL}, TC_ARGS_HELP, ""},
      {{"-h", NULL}, TC_ARGS_HELP, ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_args_status st = parse(&c, &e, cases[i].a);
    TC_CHECK(st == cases[i].st && e.status == st, "case %zu (%s): status %d, want %d", i, cases[i].a[0], st,
          cases[i].st);
    TC_CHECK(!strcmp(e.name, cases[i].name), "case %zu: name '%s', want '%s'", i, e.name, cases[i].name);
  }
  {
    const char *a[] = {"--model", "gp", NULL};
    parse(&c, &e, a);
    TC_CHECK(!strcmp(e.expect, "one of er, ba, ws"), "choice expect: %s", e.expect);
    const char *b[] = {"--nodes", "9:1", NULL};
    parse(&c, &e, b);
    TC_CHECK(strstr(e.expect, "LO:HI") && strstr(e.expect, "[1, 256]"), "pair expect: %s", e.expect);
  }
}

static void positionals(void) {
  const char *out = NULL;
  int json = 0;
  tc_opt o[] = {{.name = "--out", .kind = TC_OPT_STRING, .dst = &out},
                {.name = "--json", .kind = TC_OPT_SWITCH, .dst = &json}};
  const char *pos[2];
  int n_pos = -1;
  tc_args_error e;
  char *a1[] = {"show", "cache", "--json", "-3", NULL};
  TC_CHECK(tc_args_parse_pos(4, a1, o, 2, pos, 2, &n_pos, &e) == TC_ARGS_OK && n_pos == 2 &&
            !strcmp(pos[0], "cache") && !strcmp(pos[1], "-3") && json == 1,
        "negative number is positional");
  char *a2[] = {"show", "--", "--json", NULL};
  json = 0;
  TC_CHECK(tc_args_parse_pos(3, a2, o, 2, pos, 2, &n_pos, &e) == TC_ARGS_OK && n_pos == 1 &&
            !strcmp(pos[0], "--json") && json == 0,
        "-- ends flags");
  char *a3[] = {"show", "a", "b", "c", NULL};
  TC_CHECK(tc_args_parse_pos(4, a3, o, 2, pos, 2, &n_pos, &e) == TC_ARGS_POSITIONAL && !strcmp(e.name, "c"),
        "one too many");
  char *a4[] = {"show", "-x", NULL};
  TC_CHECK(tc_args_parse_pos(2, a4, o, 2, pos, 2, &n_pos, &e) == TC_ARGS_UNKNOWN && !strcmp(e.name, "-x"),
        "single-dash word");
}

static void help(void) {
  cfg c;
  tc_opt o[16];
  memset(&c, 0, sizeof c);
  c.graphs = 1000, c.lo = 5, c.hi = 10, c.p = 0.3, c.level = 1, c.model = 1;
  size_t n = table(&c, o);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  TC_CHECK(f != NULL, "open_memstream");
  if (!f) return;
  tc_args_help(f, o, n, 20); /* help text starts in column 20 */
  fclose(f);
  const char *want[] = {"  --graphs N" "        " "how many (default 1000)\n", "section:\n",
                        "  --nodes LO:HI" "     " "nodes (default 5:10)\n", "(default 0.3)",
                        "a range\n                    second line\n", "model (default ba)", "k (default all)",
                        "  --quiet" "           " "quiet\n", NULL};
  for (int i = 0; want[i]; i++) TC_CHECK(strstr(text, want[i]) != NULL, "help lacks '%s':\n%s", want[i], text);
  free(text);
}

/* tc_args_report: the one line every program prints for a bad flag. */
static void report(void) {
  struct { const char *argv[4]; int exit; const char *line; } cases[] = {
      {{"--graphs", "ten", NULL}, 2,
       "prog: --graphs: expected an integer in [0, 1152921504606846976], got 'ten' (see --help)\n"},
      {{"--bogus=1", NULL}, 2, "prog: --bogus: unknown flag (see --help)\n"},
      {{"--level", NULL}, 2, "prog: --level: needs a value (see --help)\n"},
      {{"--quiet=yes", NULL}, 2, "prog: --quiet: takes no value, got 'yes' (see --help)\n"},
      {{"stray", NULL}, 2, "prog: unexpected argument 'stray' (see --help)\n"},
      {{"--help", NULL}, 0, ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cfg c;
    tc_args_error e;
    parse(&c, &e, cases[i].argv);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    TC_CHECK(f != NULL, "open_memstream");
    if (!f) return;
    int rc = tc_args_report(f, "prog", &e);
    fclose(f);
    TC_CHECK(rc == cases[i].exit && !strcmp(text, cases[i].line), "%s: exit %d, line '%s', want %d '%s'",
             cases[i].argv[0], rc, text, cases[i].exit, cases[i].line);
    free(text);
  }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f) {
    TC_CHECK(tc_args_report_value(f, "prog sub", "--rows", "x", "an integer in [0, 9]") == 2, "report_value");
    fclose(f);
    TC_CHECK(!strcmp(text, "prog sub: --rows: expected an integer in [0, 9], got 'x' (see --help)\n"), "%s", text);
    free(text);
  }
}

static void checked(void) {
  uint64_t r = 7;
  TC_CHECK(tc_mul_u64_overflow(UINT64_MAX, 2, &r) == 1 && r == 7, "mul overflow");
  TC_CHECK(tc_mul_u64_overflow(1ull << 32, 1ull << 32, &r) == 1, "2^32 * 2^32");
  TC_CHECK(tc_mul_u64_overflow((1ull << 32) - 1, (1ull << 32) + 1, &r) == 0 && r == UINT64_MAX, "2^64-1");
  TC_CHECK(tc_mul_u64_overflow(0, UINT64_MAX, &r) == 0 && r == 0, "0 * max");
  TC_CHECK(tc_add_u64_overflow(UINT64_MAX - 198, 199, &r) == 1, "add overflow");
  TC_CHECK(tc_add_u64_overflow(UINT64_MAX - 199, 199, &r) == 0 && r == UINT64_MAX, "add edge");
  TC_CHECK(tc_mul3_u64_overflow(4096, 65535, 256 * 257 * 4ull, &r) == 0, "a batch slab fits");
  TC_CHECK(tc_mul3_u64_overflow(1ull << 30, 1ull << 30, 1ull << 4, &r) == 1, "mul3 overflow");
  TC_CHECK(tc_div_ceil_u64(UINT64_MAX, 2) == (1ull << 63), "div_ceil at the edge");
  TC_CHECK(tc_div_ceil_u64(18446744073709551417ull, 200) == 92233720368547758ull, "div_ceil no wrap");
  TC_CHECK(tc_div_ceil_u64(0, 7) == 0 && tc_div_ceil_u64(14, 7) == 2 && tc_div_ceil_u64(15, 7) == 3, "div_ceil");
  size_t s;
  TC_CHECK(tc_u64_to_size_overflow(123, &s) == 0 && s == 123, "to size");
}

int main(void) {
  numbers();
  flags();
  positionals();
  help();
  report();
  checked();
  printf("test_args: %d failures\n", tc_test_failures());
  return tc_test_failures() ? 1 : 0;
}
