/* kernels_error.c — the kernels' last-error text (the launchers never print). */
#include <stdarg.h>
#include <stdio.h>

#include "tc_kernels_error.h"
#include "twincache_kernels.h"

static _Thread_local char tc_kernels_error[256];

const char *twincache_kernels_last_error(void) { return tc_kernels_error; }

int tc_kernels_fail(const char *file, int line, const char *fmt, ...) {
  int n = snprintf(tc_kernels_error, sizeof tc_kernels_error, "%s:%d: ", file, line);
  if (n < 0 || (size_t)n >= sizeof tc_kernels_error) return TWINCACHE_KERNELS_EDEVICE;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tc_kernels_error + n, sizeof tc_kernels_error - (size_t)n, fmt, ap);
  va_end(ap);
  return TWINCACHE_KERNELS_EDEVICE;
}
