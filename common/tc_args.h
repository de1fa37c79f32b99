/* tc_args.h — the one command-line parser of the twincache programs
 * (twincache-gen, -train, -loader-bench, -gen-bench; twincache-inspect uses
 * its number parsers). libc only.
 *
 * A program declares its flags once, in a table of tc_opt; the same table
 * drives parsing (tc_args_parse) and the flag list of --help
 * (tc_args_help). Numbers are parsed strictly: decimal digits only for
 * integers (no sign, no "0x", no exponent, no spaces, nothing after), every
 * value checked against its range without wrapping. A bad argument comes
 * back as a tc_args_error; tc_args_report writes its one line, in the same
 * wording for every program. Nothing here exits; only tc_args_help and
 * tc_args_report write, and only to the FILE they are given.
 * Thread-safety: functions are reentrant; they write only through their
 * arguments (and the tc_opt destinations). */
#ifndef TC_ARGS_H
#define TC_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- strict scalar parsers (0 = ok and *out set, -1 = bad, *out untouched) */
/* Decimal integer in [lo, hi]: digits only, at least one. */
int tc_parse_u64_in(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int tc_parse_u32_in(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);
/* Finite decimal number in lo..hi; `open` = TC_OPEN_LO|TC_OPEN_HI excludes
 * an end. Accepts [+-]digits[.digits][e[+-]digits]; no hex, inf, nan. */
enum { TC_OPEN_LO = 1, TC_OPEN_HI = 2 };
int tc_parse_f64_in(const char *s, double lo, double hi, int open, double *out);
/* "an integer in [lo, hi]" / "a number in (lo, hi]" into buf[cap]. */
void tc_expect_u64(char *buf, size_t cap, uint64_t lo, uint64_t hi);
void tc_expect_f64(char *buf, size_t cap, double lo, double hi, int open);

/* ---- the flag table ---------------------------------------------------- */
typedef enum tc_opt_kind {
  TC_OPT_SWITCH,   /* int *dst = 1; takes no value */
  TC_OPT_STRING,   /* const char **dst = value; an empty value is refused */
  TC_OPT_U32,      /* uint32_t *dst in [lo, hi] */
  TC_OPT_U64,      /* uint64_t *dst in [lo, hi] */
  TC_OPT_INT,      /* int *dst in [lo, hi] (hi <= INT_MAX) */
  TC_OPT_F64,      /* double *dst in flo..fhi (open ends per `open`) */
  TC_OPT_U32_PAIR, /* "LO:HI": uint32_t *dst, *dst2, both in [lo, hi], LO <= HI */
  TC_OPT_F64_PAIR, /* "LO:HI": double *dst, *dst2, both in flo..fhi, LO <= HI */
  TC_OPT_CHOICE,   /* int *dst = position of the value in choices[] */
  TC_OPT_CUSTOM    /* parse(value, opt) decides: 0 ok, -1 bad */
} tc_opt_kind;

typedef struct tc_opt tc_opt;
struct tc_opt {
  const char *name;  /* "--graphs"; NULL: a section heading (help text only) */
  const char *meta;  /* "N" as shown in --help; NULL for a switch */
  tc_opt_kind kind;
  void *dst, *dst2;
  uint64_t lo, hi;   /* integer kinds (hi <= UINT32_MAX for the U32 kinds) */
  double flo, fhi;   /* number kinds */
  int open;          /* TC_OPEN_LO | TC_OPEN_HI for number kinds */
  const char *const *choices;                     /* CHOICE: NULL-terminated */
  int (*parse)(const char *value, const tc_opt *o); /* CUSTOM */
  const char *expect;  /* what a good value is, for the error line; NULL = derived */
  const char *help;    /* --help text; "{}" is replaced by the default (see below);
                          '\n' starts an indented continuation line */
  const char *def;     /* default as text; NULL = the destination's current value */
  int *seen;           /* optional: set to the flag's argv position (>= 1) */
};

typedef enum tc_args_status {
  TC_ARGS_OK = 0,
  TC_ARGS_HELP,         /* --help or -h: print usage, exit 0 */
  TC_ARGS_UNKNOWN,      /* name: a flag that is not in the table */
  TC_ARGS_POSITIONAL,   /* name: an argument that is not a flag (one too many) */
  TC_ARGS_NO_VALUE,     /* opt: the last argument, and it needs a value */
  TC_ARGS_SWITCH_VALUE, /* opt: --switch=value */
  TC_ARGS_BAD_VALUE     /* opt, value, expect */
} tc_args_status;

typedef struct tc_args_error {
  tc_args_status status;
  const tc_opt *opt; /* the flag concerned, when known */
  char name[64];     /* the flag as typed, without "=value" (or the stray argument, cut) */
  const char *value; /* the bad value (points into argv) */
  char expect[192];  /* what was expected: "an integer in [1, 4096]" */
} tc_args_error;

/* Parses argv[1..argc) against opts[0..n): "--flag VALUE", "--flag=VALUE"
 * and switches. Stops at the first problem or at --help/-h. Returns the
 * status (also in err->status); on TC_ARGS_OK every given flag's
 * destination is set. Destinations of flags not given are untouched. */
tc_args_status tc_args_parse(int argc, char *const *argv, const tc_opt *opts, size_t n,
                             tc_args_error *err);

/* The same for commands with positional arguments (twincache-inspect's
 * CACHE INDEX): up to max_pos of them are collected into pos[], *n_pos
 * counts them. An argument is positional when it does not start with '-',
 * is "-" alone, looks like a negative number ("-3", "-.5"), or follows
 * "--" (end of flags). One more than max_pos is TC_ARGS_POSITIONAL; a
 * single-dash word ("-x") is TC_ARGS_UNKNOWN. */
tc_args_status tc_args_parse_pos(int argc, char *const *argv, const tc_opt *opts, size_t n,
                                 const char **pos, int max_pos, int *n_pos, tc_args_error *err);

/* Writes the one line of a parse error to f (stderr), the same wording in
 * every program, naming the flag as typed:
 *   PROG: --batch: expected an integer in [1, 4096], got '0' (see --help)
 *   PROG: --bogus: unknown flag (see --help)
 *   PROG: --seed: needs a value (see --help)
 *   PROG: --json: takes no value, got '1' (see --help)
 *   PROG: unexpected argument 'extra' (see --help)
 * prog is what the line starts with ("twincache-gen", "twincache-inspect
 * show"). Returns 2, the usage-error exit status; for TC_ARGS_HELP and
 * TC_ARGS_OK writes nothing and returns 0 (the program prints its usage). */
int tc_args_report(FILE *f, const char *prog, const tc_args_error *e);
/* The TC_ARGS_BAD_VALUE line for a value a program checks itself after
 * parsing ("PROG: FLAG: expected EXPECT, got 'VALUE' (see --help)");
 * returns 2. */
int tc_args_report_value(FILE *f, const char *prog, const char *flag, const char *value, const char *expect);

/* Writes the flag list: "  --name META" padded to `column`, then the help
 * text with "{}" replaced by the default (o->def, else the destination's
 * current value: so call it on a table over a default configuration).
 * Section headings (name NULL) are printed as they are. */
void tc_args_help(FILE *f, const tc_opt *opts, size_t n, int column);

#ifdef __cplusplus
}
#endif

#endif /* TC_ARGS_H */
