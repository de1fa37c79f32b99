/* tc_gen_set.c — before `--shard I/N` writes into a set's directory: refuse,
 * at the writer and with the real reason, a shard that every reader of the
 * set would refuse later (issue 35): a directory that is a whole cache, a
 * set of another shard count (a fifth shard beside four), a sibling shard of
 * another split (--graphs, --chunk-graphs) or config. The shard's own
 * directory, if it exists, is the writer's to check (tc_cache_writer). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tc_error.h"
#include "tc_gen.h"
#include "twincache_cache.h"

/* "shard-IIIII-of-NNNNN" exactly: 1 and index/count, else 0. */
static int shard_name(const char *name, unsigned *index, unsigned *count) {
  int end = 0;
  if (strlen(name) != 20 || strncmp(name, "shard-", 6) || strncmp(name + 11, "-of-", 4)) return 0;
  for (int i = 6; i < 20; i++)
    if ((i < 11 || i >= 15) && (name[i] < '0' || name[i] > '9')) return 0;
  return sscanf(name, "shard-%5u-of-%5u%n", index, count, &end) == 2 && end == 20;
}

/* A sibling shard of the same count: the same split and config as this run,
 * or the refusal. One that cannot be opened (being created by its own task
 * right now) is left to the readers. */
static int sibling_match(const tc_gen_config *c, const char *set_dir, const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", set_dir, name);
  twincache_cache *sib = NULL;
  if (twincache_cache_open(path, &sib) != 0) return 0;
  const twincache_dims *d = twincache_cache_dims(sib);
  uint32_t C = tc_gen_chunk_graphs(c);
  char json[4096], diff[400];
  int rc = 0;
  if (d->graphs != c->graphs || d->chunk_graphs != C) {
    rc = tc_error_set(TWINCACHE_EMISMATCH,
                      "--shard %u/%u: %s already holds %s, split from %llu graphs in chunks of %u; this run splits "
                      "%llu graphs in chunks of %u, which places the shards otherwise: give the set's --graphs and "
                      "--chunk-graphs, or another --out", c->shard_index, c->shard_count, set_dir, name,
                      (unsigned long long)d->graphs, d->chunk_graphs, (unsigned long long)c->graphs, C);
  } else {
    size_t len = tc_gen_config_json(c, json, sizeof json);
    const char *have = twincache_cache_config(sib);
    if (len && strcmp(have, json) != 0) {
      tc_gen_config_diff(have, strlen(have), json, diff, sizeof diff);
      rc = tc_error_set(TWINCACHE_EMISMATCH,
                        "--shard %u/%u: %s already holds %s, of another config (%s); the shards of a set "
                        "share one config: use its options or another --out", c->shard_index, c->shard_count,
                        set_dir, name, diff);
    }
  }
  twincache_cache_close(sib);
  return rc;
}

int tc_gen_set_check(const tc_gen_config *c, const char *set_dir) {
  struct stat st;
  char path[4200], other[32] = "", sibling[32] = "";
  if (stat(set_dir, &st) != 0) {
    if (errno == ENOENT) return 0; /* a new set */
    return tc_error_set(TWINCACHE_EIO, "cannot read %s: %s", set_dir, strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return tc_error_set(TWINCACHE_EINVAL, "--out %s is not a directory: with --shard, --out names the set's "
                        "directory", set_dir);
  snprintf(path, sizeof path, "%s/data.mdb", set_dir);
  if (stat(path, &st) == 0)
    return tc_error_set(TWINCACHE_EMISMATCH, "--shard %u/%u: --out %s is a whole cache (it holds data.mdb), not "
                        "a set's directory; a shard goes into a directory of shards: use another --out",
                        c->shard_index, c->shard_count, set_dir);
  DIR *dir = opendir(set_dir);
  if (!dir) return tc_error_set(TWINCACHE_EIO, "cannot read %s: %s", set_dir, strerror(errno));
  unsigned other_count = 0;
  struct dirent *e;
  /* the lowest-named shard of another count, and of this count another index
   * (readdir's order is the file system's: the lowest keeps messages stable) */
  while ((e = readdir(dir)) != NULL) {
    unsigned index, count;
    if (!shard_name(e->d_name, &index, &count)) continue;
    if (count != c->shard_count) {
      if (!other[0] || strcmp(e->d_name, other) < 0) snprintf(other, sizeof other, "%s", e->d_name), other_count = count;
    } else if (index != c->shard_index && (!sibling[0] || strcmp(e->d_name, sibling) < 0)) {
      snprintf(sibling, sizeof sibling, "%s", e->d_name);
    }
  }
  closedir(dir);
  if (other[0])
    return tc_error_set(TWINCACHE_EMISMATCH,
                        "--shard %u/%u: %s holds %s, a set of %u shards; a set's shards all have one count "
                        "(readers refuse a mix): use --shard I/%u or another --out", c->shard_index,
                        c->shard_count, set_dir, other, other_count, other_count);
  return sibling[0] ? sibling_match(c, set_dir, sibling) : 0;
}
