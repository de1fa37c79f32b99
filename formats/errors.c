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
  default: return "unknown twincache error";
  }
}
