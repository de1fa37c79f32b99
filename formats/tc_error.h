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

/* Records the message (printf format) for twincache_last_error and returns
 * status unchanged, so a failure path reads `return tc_error_set(rc, ...)`.
 * Replaces any earlier message of this thread. */
int tc_error_set(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tc_error_vset(int status, const char *fmt, va_list ap);

/* Prefixes this thread's current message with context ("ctx: inner"), or
 * sets it when there is none; returns status. For outer layers that know
 * the file or record an inner failure concerns. */
int tc_error_wrap(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears this thread's message (a call that succeeds may leave it alone). */
void tc_error_clear(void);

#endif
