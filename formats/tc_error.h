/* tc_error.h — how every twincache library leaves its one error message.
 *
 * A library function that fails returns its negative TWINCACHE_E* status and
 * leaves one message, naming the file, record or option concerned, in a
 * thread-local buffer that twincache_last_error() (twincache_format.h) reads.
 * Libraries never print and never exit. Internal: not exported by
 * libtwincache.so (its version script exports twincache_* only). */
#ifndef TC_ERROR_H
#define TC_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Records the message (printf format) for twincache_last_error and returns
 * status unchanged, so a failure path reads `return tc_error_set(rc, ...)`.
 * Replaces any earlier message of this thread. */
int tc_error_set(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tc_error_vset(int status, const char *fmt, va_list ap);

/* Leaves the function with status and its message when cond holds, in the
 * style of zstd's RETURN_ERROR_IF: every failure a user can reach says why.
 *   TC_RETURN_IF(n == 0, TWINCACHE_EINVAL, "graph %llu: no nodes", idx);
 * cond is evaluated once; the format's arguments only when it holds. */
#define TC_RETURN_IF(cond, status, ...)             \
  do {                                              \
    if (cond) return tc_error_set((status), __VA_ARGS__); \
  } while (0)

/* Prefixes this thread's current message with context ("ctx: inner"); when
 * there is none, "ctx: twincache_strerror(status)". Returns status. For
 * outer layers that know the file or record an inner failure concerns
 * (clear before the inner call when an older message could be left). */
int tc_error_wrap(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears this thread's message (a call that succeeds may leave it alone). */
void tc_error_clear(void);

/* The one errno -> status table. `missing` is the status ENOENT and ENOTDIR
 * stand for where the caller is (TWINCACHE_ENOTFOUND for a cache directory
 * or a checkpoint, TWINCACHE_ENOTCACHE for the data file inside a cache
 * directory): the table is shared, the meaning of absence is not.
 * 0 -> TWINCACHE_OK; ENOSPC, EDQUOT -> EFULL; ENOMEM -> ENOMEM;
 * EWOULDBLOCK -> EBUSY; EINVAL -> EINVAL; any other errno -> EIO. */
int tc_status_from_errno(int err, int missing);

/* tc_status_from_errno(err, missing) with the message "<fmt>: <strerror(err)>"
 * (e.g. "DIR/data.mdb: Permission denied"); returns the status. */
int tc_error_os(int err, int missing, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif
