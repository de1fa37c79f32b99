/* errors.c — the one table of twincache status strings. */
#include "twincache_format.h"

const char *twincache_strerror(int code) {
  switch (code) {
  case TWINCACHE_OK: return "success";
  case TWINCACHE_END: return "end of stream";
  case TWINCACHE_ENOMEM: return "out of memory";
  case TWINCACHE_EINVAL: return "invalid argument or option out of range";
  case TWINCACHE_ECORRUPT: return "corrupt record: bytes are not a valid twincache frame, chunk or meta entry";
  case TWINCACHE_ECHECKSUM: return "checksum mismatch: the record is damaged";
  case TWINCACHE_EVERSION: return "written by a newer twincache format version; upgrade twincache to read it";
  case TWINCACHE_ETOOBIG: return "decoded sizes exceed the caller's capacity";
  case TWINCACHE_EZSTD: return "zstd error";
  case TWINCACHE_ELMDB: return "LMDB error";
  case TWINCACHE_EIO: return "I/O error";
  case TWINCACHE_ENOTFOUND: return "not found";
  case TWINCACHE_EMISMATCH: return "the cache was built with a different configuration";
  case TWINCACHE_ENOTCACHE: return "not a twincache cache";
  case TWINCACHE_ETHREAD: return "a thread could not be created";
  case TWINCACHE_ECLOSED: return "the object is closing or failed earlier";
  case TWINCACHE_EFULL: return "the disk or the LMDB map is full";
  case TWINCACHE_EBUSY: return "another process is writing the cache";
  case TWINCACHE_EAGAIN: return "nothing ready within the timeout; try again";
  case TWINCACHE_EDEADLK: return "would wait forever: the batch slot needed next is held and cannot be released";
  case TWINCACHE_ESTALE: return "stale batch handle: released already, or no longer the batch handed out";
  case TWINCACHE_ETRUNCATED: return "data file shorter than the database says: truncated or damaged copy";
  case TWINCACHE_EDEVICE: return "a CUDA call or kernel launch failed";
  default: return "unknown twincache error";
  }
}

/* ---- the thread's last error message (tc_error.h) ------------------------ */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "tc_error.h"

enum { TC_ERROR_BYTES = 1024 };
static _Thread_local char tc_error_text[TC_ERROR_BYTES];

const char *twincache_last_error(void) { return tc_error_text; }

void tc_error_clear(void) { tc_error_text[0] = '\0'; }

int tc_error_vset(int status, const char *fmt, va_list ap) {
  vsnprintf(tc_error_text, sizeof tc_error_text, fmt, ap);
  return status;
}

int tc_error_set(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_error_vset(status, fmt, ap);
  va_end(ap);
  return status;
}

int tc_error_wrap(int status, const char *fmt, ...) {
  char inner[TC_ERROR_BYTES];
  snprintf(inner, sizeof inner, "%s", tc_error_text[0] ? tc_error_text : twincache_strerror(status));
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tc_error_text, sizeof tc_error_text, fmt, ap);
  va_end(ap);
  size_t used = n < 0 ? 0 : (size_t)n;
  if (inner[0] && used + 2 < sizeof tc_error_text) {
    memcpy(tc_error_text + used, ": ", 2);
    size_t room = sizeof tc_error_text - used - 2, len = strnlen(inner, room - 1);
    memcpy(tc_error_text + used + 2, inner, len);
    tc_error_text[used + 2 + len] = '\0';
  }
  return status;
}

int tc_status_from_errno(int err, int missing) {
  switch (err) {
  case 0: return TWINCACHE_OK;
  case ENOENT:
  case ENOTDIR: return missing;
  case ENOSPC:
  case EDQUOT: return TWINCACHE_EFULL;
  case ENOMEM: return TWINCACHE_ENOMEM;
  case EWOULDBLOCK: return TWINCACHE_EBUSY;
  case EINVAL: return TWINCACHE_EINVAL;
  default: return TWINCACHE_EIO; /* EACCES, EPERM, EROFS, EIO, ...: the message names it */
  }
}

int tc_error_os(int err, int missing, const char *fmt, ...) {
  char what[TC_ERROR_BYTES / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return tc_error_set(tc_status_from_errno(err, missing), "%s: %s", what, strerror(err));
}
