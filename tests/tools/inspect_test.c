/* inspect_test.c — see inspect_test.h. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "inspect_test.h"
#include "tc_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


char *tt_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      char *grown = realloc(buf, cap *= 2);
      if (!grown) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = grown;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  if (size) *size = n;
  return buf;
}

int tt_run(char *const argv[], const char *scratch, tt_result *r) {
  char out_path[4096], err_path[4096];
  memset(r, 0, sizeof *r);
  snprintf(out_path, sizeof out_path, "%s/run.stdout", scratch);
  snprintf(err_path, sizeof err_path, "%s/run.stderr", scratch);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
    close(fo);
    close(fe);
    execv(argv[0], argv);
    _exit(127);
  }
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) return -1;
  r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  r->out = tt_read_file(out_path, &r->out_len);
  r->err = tt_read_file(err_path, NULL);
  if (!r->out || !r->err) {
    tt_result_clear(r);
    return -1;
  }
  return 0;
}

void tt_result_clear(tt_result *r) {
  free(r->out);
  free(r->err);
  memset(r, 0, sizeof *r);
}

size_t tt_count_lines(const char *s) {
  size_t n = 0;
  for (; s && *s; s++) n += *s == '\n';
  return n;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

void tt_remove_tree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

int tt_scratch_init(const char *scratch) {
  char cmd_path[4096];
  tt_remove_tree(scratch);
  /* mkdir -p: the parent (the build's test-tmp) exists already */
  snprintf(cmd_path, sizeof cmd_path, "%s", scratch);
  for (char *p = cmd_path + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(cmd_path, 0755);
      *p = '/';
    }
  return mkdir(scratch, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

int tt_make_cache(const char *gen, const char *dir, const char *scratch, unsigned graphs,
                  const char *const *extra) {
  char n[32];
  snprintf(n, sizeof n, "%u", graphs);
  tt_remove_tree(dir);
  const char *argv[64] = {gen,       "--out", dir,  "--graphs", n,       "--seed",
                          "1",       "--nodes", "3:6", "--samples", "16", "--chunk-graphs",
                          "16",      "--quiet"};
  int argc = 14;
  for (int i = 0; extra && extra[i] && argc < 63; i++) argv[argc++] = extra[i];
  argv[argc] = NULL;
  tt_result r;
  if (tt_run((char *const *)argv, scratch, &r) != 0) return -1;
  int ok = r.status == 0;
  if (!ok) fprintf(stderr, "twincache-gen exited %d: %s%s", r.status, r.out, r.err);
  tt_result_clear(&r);
  return ok ? 0 : -1;
}

static int copy_file(const char *src, const char *dst) {
  size_t n = 0;
  char *data = tt_read_file(src, &n);
  if (!data) return -1;
  FILE *f = fopen(dst, "wb");
  int rc = f && fwrite(data, 1, n, f) == n ? 0 : -1;
  if (f && fclose(f) != 0) rc = -1;
  free(data);
  return rc;
}

int tt_copy_cache(const char *src, const char *dst) {
  tt_remove_tree(dst);
  if (mkdir(dst, 0755) != 0) return -1;
  DIR *dir = opendir(src);
  if (!dir) return -1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "lock.mdb")) continue;
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/%s", src, e->d_name);
    snprintf(b, sizeof b, "%s/%s", dst, e->d_name);
    if (copy_file(a, b) != 0) rc = -1;
  }
  closedir(dir);
  return rc;
}

int tt_begin(int argc, char **argv, unsigned graphs, char *cache, size_t cache_cap) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s GEN INSPECT SCRATCH\n", argv[0]);
    return 2;
  }
  const char *gen = argv[1], *scratch = argv[3];
  snprintf(cache, cache_cap, "%s/cache", scratch);
  if (tt_scratch_init(scratch) != 0 || tt_make_cache(gen, cache, scratch, graphs, NULL) != 0) {
    fprintf(stderr, "could not create the test cache in %s\n", scratch);
    return 1;
  }
  return 0;
}

int tt_reader_open(const char *cache, tt_reader *r) {
  memset(r, 0, sizeof *r);
  int rc = twincache_cache_open(cache, &r->cache);
  if (rc == TWINCACHE_OK) {
    const twincache_dims *dims = twincache_cache_dims(r->cache);
    r->dctx = twincache_dctx_create();
    r->graph = twincache_graph_alloc(dims->max_nodes, dims->samples,
                                     dims->max_inter ? dims->max_inter : 1, dims->hidden);
    if (!r->dctx || !r->graph) rc = TWINCACHE_ENOMEM;
  } else {
    r->cache = NULL;
  }
  if (rc != TWINCACHE_OK) tt_reader_close(r);
  return rc;
}

void tt_reader_close(tt_reader *r) {
  twincache_graph_free(r->graph);
  twincache_dctx_free(r->dctx);
  twincache_cache_close(r->cache);
  memset(r, 0, sizeof *r);
}

/* LMDB's meta pages (page 0 and page 1 of data.mdb): MDB_meta after the
 * 16-byte page header, mm_dbs[0].md_pad (the page size) at 40, mm_last_pg at
 * 136, mm_txnid at 144. Writes `value` at offset `at` of the meta page with
 * the larger transaction id (the one LMDB reads). 0, or -1. */
int tt_lmdb_meta_poke(const char *dir, unsigned at, uint64_t value) {
  char data[4200];
  snprintf(data, sizeof data, "%s/data.mdb", dir);
  size_t n = 0;
  uint8_t *b = (uint8_t *)tt_read_file(data, &n);
  if (!b || n < 8192) {
    free(b);
    return -1;
  }
  uint32_t psize = tc_load_u32(b + 40);
  if (psize < 4096 || (size_t)psize * 2 > n) {
    free(b);
    return -1;
  }
  size_t page = tc_load_u64(b + 144) > tc_load_u64(b + psize + 144) ? 0 : psize;
  tc_store_u64(b + page + at, value);
  FILE *f = fopen(data, "r+b");
  int ok = f && fwrite(b, 1, n, f) == n;
  if (f) ok = fclose(f) == 0 && ok;
  free(b);
  return ok ? 0 : -1;
}
