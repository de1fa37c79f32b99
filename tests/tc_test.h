/* tc_test.h — the one set of check macros every test program uses.
 *
 *   TC_CHECK(cond)               a failed cond is printed with file:line and
 *   TC_CHECK(cond, fmt, ...)     counted; the test goes on. The optional
 *                                printf message follows the condition.
 *   TC_REQUIRE(cond[, fmt, ...]) the same, but the test stops (exit 1): the
 *                                rest cannot run without it.
 *   TC_CHECK_RC(expr, want)      status codes: on a mismatch prints both
 *                                codes, and their names when the includer
 *                                defined TC_TEST_STRERROR (e.g. as
 *                                twincache_strerror) before including this.
 *   TC_CHECK_NEAR(got, want, tol) |got - want| < tol, as doubles.
 *   TC_FAIL(fmt, ...)            counts a failure found by hand, printing
 *                                file:line and the message;
 *   tc_test_count_failure()      counts one the test has already printed.
 *
 *   tc_test_failures()  failed checks so far in this translation unit;
 *   tc_test_result()    0 when no check failed, else 1 (main's return);
 *   tc_test_finish(name) prints "name: ok" or the failure count to stderr and
 *                        returns tc_test_result().
 *
 * Header-only and free of the project's headers. The counter is per
 * translation unit: checks belong in the test program's own .c file (the
 * helpers' .c files only REQUIRE). Not thread-safe: check from one thread. */
#ifndef TC_TEST_H
#define TC_TEST_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static int tc_test_failures_;

static inline int tc_test_failures(void) { return tc_test_failures_; }
static inline void tc_test_count_failure(void) { tc_test_failures_++; }
static inline int tc_test_result(void) { return tc_test_failures_ ? 1 : 0; }

/* Runs a shell command built like printf (at most 16 KiB); returns its exit
 * status, 128 when it did not exit normally. */
static inline int tc_test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int tc_test_sh(const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static inline int tc_test_finish(const char *name) {
  if (tc_test_failures_) fprintf(stderr, "%s: %d check(s) failed\n", name, tc_test_failures_);
  else printf("%s: ok\n", name);
  return tc_test_result();
}

/* Prints "file:line: what: expr" (": expr" left out when expr is empty, and
 * ": message" added when fmt is not NULL). */
static inline void tc_test_vreport_(const char *file, int line, const char *what, const char *expr,
                                    const char *fmt, va_list ap) {
  fprintf(stderr, "%s:%d: %s", file, line, what);
  if (expr[0]) fprintf(stderr, ": %s", expr);
  if (fmt) {
    fputs(": ", stderr);
    vfprintf(stderr, fmt, ap);
  }
  fputc('\n', stderr);
}

static inline void tc_test_fail_(const char *file, int line, const char *what, const char *expr) {
  tc_test_failures_++;
  fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, expr);
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static inline void tc_test_failf_(const char *file, int line, const char *what, const char *expr,
                                  const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_test_failures_++;
  tc_test_vreport_(file, line, what, expr, fmt, ap);
  va_end(ap);
}

static inline void tc_test_fail_rc_(const char *file, int line, const char *expr, int got, int want,
                                    const char *(*name)(int)) {
  tc_test_failures_++;
  if (name)
    fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", file, line, expr, got, name(got),
            want, name(want));
  else
    fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", file, line, expr, got, want);
}

static inline void tc_test_fail_near_(const char *file, int line, const char *expr, double got,
                                      double want, double tol) {
  tc_test_failures_++;
  fprintf(stderr, "%s:%d: %s is %.12g, want %.12g within %g\n", file, line, expr, got, want, tol);
}

/* The one-argument or the with-message variant, by argument count (strict
 * C11 has no empty __VA_ARGS__): TC_PICK_(a) gives 1, TC_PICK_(a, b, ...) M;
 * up to 16 arguments. */
#define TC_NTH_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define TC_PICK_(...) TC_NTH_(__VA_ARGS__, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, 1, 0)
#define TC_CAT_(a, b) TC_CAT2_(a, b)
#define TC_CAT2_(a, b) a##b

#define TC_CHECK(...) TC_CAT_(TC_CHECK_, TC_PICK_(__VA_ARGS__))(__VA_ARGS__)
#define TC_CHECK_1(cond)                                                      \
  do {                                                                        \
    if (!(cond)) tc_test_fail_(__FILE__, __LINE__, "check failed", #cond);    \
  } while (0)
#define TC_CHECK_M(cond, ...)                                                 \
  do {                                                                        \
    if (!(cond)) tc_test_failf_(__FILE__, __LINE__, "check failed", #cond, __VA_ARGS__); \
  } while (0)

#define TC_REQUIRE(...) TC_CAT_(TC_REQUIRE_, TC_PICK_(__VA_ARGS__))(__VA_ARGS__)
#define TC_REQUIRE_1(cond)                                                    \
  do {                                                                        \
    if (!(cond)) {                                                            \
      tc_test_fail_(__FILE__, __LINE__, "required", #cond);                   \
      exit(1);                                                                \
    }                                                                         \
  } while (0)
#define TC_REQUIRE_M(cond, ...)                                               \
  do {                                                                        \
    if (!(cond)) {                                                            \
      tc_test_failf_(__FILE__, __LINE__, "required", #cond, __VA_ARGS__);     \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

#define TC_FAIL(...) tc_test_failf_(__FILE__, __LINE__, "failed", "", __VA_ARGS__)

#ifdef TC_TEST_STRERROR
#define TC_TEST_NAME_ TC_TEST_STRERROR
#else
#define TC_TEST_NAME_ NULL
#endif
#define TC_CHECK_RC(expr, want)                                               \
  do {                                                                        \
    int tc_got_ = (expr), tc_want_ = (want);                                  \
    if (tc_got_ != tc_want_)                                                  \
      tc_test_fail_rc_(__FILE__, __LINE__, #expr, tc_got_, tc_want_, TC_TEST_NAME_); \
  } while (0)

#define TC_CHECK_NEAR(got, want, tol)                                         \
  do {                                                                        \
    double tc_g_ = (got), tc_w_ = (want), tc_t_ = (tol);                      \
    if (!(fabs(tc_g_ - tc_w_) < tc_t_)) tc_test_fail_near_(__FILE__, __LINE__, #got, tc_g_, tc_w_, tc_t_); \
  } while (0)

#endif
