/* inspect_manifest.c — `twincache-inspect manifest SET --out FILE`: writes
 * a manifest naming the shards of a set (FORMAT.md section 7.2) by their
 * absolute paths, then reopens FILE as a set to check it. */
#include "inspect.h"

static const char k_help[] =
    "usage: " TC_PROG " manifest SET --out FILE\n"
    "Writes a cache-set manifest naming the shards of SET (a directory of shards,\n"
    "or a manifest) by their absolute paths, with their index ranges, cache tag\n"
    "and config; FILE is then read back as a set. Edit the paths to move shards\n"
    "(e.g. a node's shards onto its local disk); every tool reads FILE as the cache.\n"
    "  --out FILE   the manifest to write (replaced only by a complete one)\n"
    "  --help       this text\n";

int tc_cmd_manifest(int argc, char **argv) {
  const char *out = NULL;
  const tc_flag flags[] = {{"out", 1, &out}};
  tc_args a;
  int rc = tc_args_begin(argc, argv, flags, 1, k_help, 1, &a);
  if (rc != TC_ARGS_GO) return rc;
  if (!out) return tc_usage_error("manifest", "--out FILE is required");
  twincache_cache *c = NULL, *check = NULL;
  int status = tc_cache_open_or_report(a.positional[0], &c);
  if (status) return status;
  if (twincache_cache_members(c) == 0) {
    twincache_cache_close(c);
    return tc_usage_error("manifest", "%s is one cache directory, not a set of shards", a.positional[0]);
  }
  if (twincache_cache_write_manifest(c, out) != TWINCACHE_OK ||
      twincache_cache_open(out, &check) != TWINCACHE_OK) {
    fprintf(stderr, "%s: %s\n", TC_PROG, twincache_last_error());
    status = TC_EXIT_FAIL;
  } else {
    printf("wrote %s: %u shards, %llu graphs\n", out, twincache_cache_members(check),
           (unsigned long long)twincache_cache_count(check));
  }
  twincache_cache_close(check);
  twincache_cache_close(c);
  return status;
}
