/* tc_loader_internal.h — the loader's internal hooks for its own tests; not
 * part of the public API. */
#ifndef TC_LOADER_INTERNAL_H
#define TC_LOADER_INTERNAL_H

#include <stdint.h>

#include "twincache_loader.h"

/* next() calls currently inside l (0 or 1): lets a test see that a consumer
 * thread is blocked before it calls close. Thread-safe. */
uint32_t tc_loader_calls_in_next(twincache_loader *l);

#endif /* TC_LOADER_INTERNAL_H */
