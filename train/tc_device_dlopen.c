/* tc_device_dlopen.c — tc_device.h when twincache-train was built without
 * the CUDA backend linked in (the portable wheel's trainer; a build without
 * nvcc): the backend is the plugin libtwincache_cuda.so (tc_device_plugin.h),
 * loaded at the first call, as the MPI library and NCCL are. Where it is
 * absent, every entry point fails with "built without CUDA" and the
 * trainer takes the CPU.
 *
 * Which file: $TWINCACHE_CUDA_PLUGIN when set (alone: the user's choice),
 * else libtwincache_cuda.so in the trainer's own folder (the build tree),
 * then in TC_CUDA_PLUGIN_REL from it (installed: ../lib/twincache). A file
 * that exists but does not load, is not a plugin or comes from another
 * build is a failure with its reason, never passed over for the next.
 *
 * Each context is wrapped: its reduce hook goes through reduce_through, so
 * a failed sum's message (the trainer's own error state) reaches the
 * plugin's, which the failed step then reports. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_device_plugin.h"
#include "tc_error.h"
#include "twincache_format.h"

#ifndef TC_CUDA_PLUGIN_REL
#define TC_CUDA_PLUGIN_REL "../lib/twincache"
#endif
/* a build without CUDA says why (CMake: TWINCACHE_NO_CUDA_WHY); a build
 * with it made the plugin, which was not installed with the trainer */
#ifdef TC_NO_CUDA_WHY
#define TC_NO_PLUGIN "built without CUDA (" TC_NO_CUDA_WHY ") and no CUDA plugin"
#else
#define TC_NO_PLUGIN "no CUDA plugin installed with this trainer"
#endif

/* the one plugin of this process, loaded once */
static struct {
  pthread_once_t once;
  const tc_cuda_plugin *t; /* NULL: none loaded, why says why */
  char why[3 * PATH_MAX]; /* room for the paths it names */
} P = {PTHREAD_ONCE_INIT, NULL, ""};

struct tc_cuda {
  tc_cuda *inner; /* the plugin's context */
  tc_cuda_reduce_fn reduce;
  void *reduce_user;
};

/* The trainer's folder into dir[cap] (no trailing slash); 0 on success. */
static int exe_dir(char *dir, size_t cap) {
  ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
  if (n <= 0 || (size_t)n >= cap - 1) return -1;
  dir[n] = '\0';
  char *slash = strrchr(dir, '/');
  if (!slash) return -1;
  *slash = '\0';
  return 0;
}

/* Loads and checks the plugin at path; on failure leaves P.why. */
static void load_from(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(P.why, sizeof P.why, "CUDA plugin %s does not load: %s", path, dlerror());
    return;
  }
  tc_cuda_plugin_fn entry = (tc_cuda_plugin_fn)dlsym(lib, TC_CUDA_PLUGIN_SYMBOL);
  const tc_cuda_plugin *t = entry ? entry() : NULL;
  static const uint32_t sizes[TC_PLUGIN_SIZES] = TC_CUDA_PLUGIN_SIZES;
  if (!t) {
    snprintf(P.why, sizeof P.why, "%s is not a twincache CUDA plugin (no %s table)", path, TC_CUDA_PLUGIN_SYMBOL);
  } else if (t->abi != TC_CUDA_PLUGIN_ABI || t->table_bytes != sizeof(tc_cuda_plugin)) {
    snprintf(P.why, sizeof P.why, "CUDA plugin %s speaks plugin ABI %u (%u-byte table), this trainer %u (%zu): "
             "use the plugin installed with this trainer", path, t->abi, t->table_bytes, TC_CUDA_PLUGIN_ABI,
             sizeof(tc_cuda_plugin));
  } else if (!t->version || strcmp(t->version, TWINCACHE_VERSION_STRING) != 0 ||
             memcmp(t->sizes, sizes, sizeof sizes) != 0) {
    snprintf(P.why, sizeof P.why, "CUDA plugin %s comes from another twincache build (version %s, this trainer "
             "%s%s): use the plugin installed with this trainer", path, t->version ? t->version : "(none)",
             TWINCACHE_VERSION_STRING, memcmp(t->sizes, sizes, sizeof sizes) ? "; its structs differ" : "");
  } else {
    P.t = t;
    return;
  }
  dlclose(lib);
}

static void load_once(void) {
  const char *env = getenv("TWINCACHE_CUDA_PLUGIN");
  char dir[PATH_MAX], here[PATH_MAX + 64], there[2 * PATH_MAX];
  if (env && *env) {
    load_from(env);
    return;
  }
  if (exe_dir(dir, sizeof dir) != 0) {
    snprintf(P.why, sizeof P.why, TC_NO_PLUGIN ": the trainer's own folder is unknown (/proc/self/exe); "
             "name the plugin with TWINCACHE_CUDA_PLUGIN");
    return;
  }
  snprintf(here, sizeof here, "%s/%s", dir, TC_CUDA_PLUGIN_FILE);
  snprintf(there, sizeof there, "%s/%s/%s", dir, TC_CUDA_PLUGIN_REL, TC_CUDA_PLUGIN_FILE);
  if (access(here, F_OK) == 0) load_from(here);
  else if (access(there, F_OK) == 0) load_from(there);
  else
    snprintf(P.why, sizeof P.why, TC_NO_PLUGIN " (no %s in %s or %s/%s)", TC_CUDA_PLUGIN_FILE, dir, dir,
             TC_CUDA_PLUGIN_REL);
}

/* 1 when the plugin is loaded; else 0 with P.why as the message. */
static int loaded(void) {
  pthread_once(&P.once, load_once);
  if (P.t) return 1;
  tc_error_set(TWINCACHE_EDEVICE, "%s", P.why);
  return 0;
}

/* A failed call's message, copied from the plugin's error state to ours. */
static int fwd(int rc) {
  if (rc != 0) tc_error_set(rc, "%s", P.t->last_error());
  return rc;
}

int tc_cuda_select(int local_rank, int forced, int *index, int *count) {
  *index = -1, *count = 0;
  return loaded() ? fwd(P.t->select(local_rank, forced, index, count)) : TWINCACHE_EDEVICE;
}
int tc_cuda_check(void) { return loaded() ? fwd(P.t->check()) : TWINCACHE_EDEVICE; }
void tc_cuda_device_name(char *name, size_t cap) {
  if (cap) name[0] = '\0';
  if (cap && loaded()) P.t->device_name(name, cap);
}
void *tc_cuda_host_alloc(size_t bytes, void *user) {
  if (!loaded()) return NULL;
  void *p = P.t->host_alloc(bytes, user);
  if (!p) fwd(TWINCACHE_EDEVICE);
  return p;
}
void tc_cuda_host_free(void *ptr, void *user) {
  if (ptr && P.t) P.t->host_free(ptr, user); /* only memory the plugin gave */
}

int tc_cuda_create(tc_cuda **out, const twincache_batch_layout *l, const tc_model *m) {
  *out = NULL;
  if (!loaded()) return TWINCACHE_EDEVICE;
  tc_cuda *c = calloc(1, sizeof *c);
  if (!c) return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
  int rc = fwd(P.t->create(&c->inner, l, m));
  if (rc != 0) {
    free(c);
    return rc;
  }
  *out = c;
  return 0;
}
void tc_cuda_free(tc_cuda *c) {
  if (!c) return;
  P.t->free(c->inner);
  free(c);
}

int tc_cuda_copy(tc_cuda *c, int buf, const twincache_batch *batch) { return fwd(P.t->copy(c->inner, buf, batch)); }
int tc_cuda_copy_wait(tc_cuda *c, int buf) { return fwd(P.t->copy_wait(c->inner, buf)); }

/* The plugin's hook: the trainer's sum, and its message handed to the
 * plugin, whose failed step returns it to fwd. */
static int reduce_through(void *user, float *grads, size_t n, double *tot, void *stream) {
  tc_cuda *c = user;
  int rc = c->reduce(c->reduce_user, grads, n, tot, stream);
  if (rc != 0) P.t->set_error(rc, twincache_last_error());
  return rc;
}
void tc_cuda_set_reduce(tc_cuda *c, tc_cuda_reduce_fn reduce, void *user) {
  c->reduce = reduce, c->reduce_user = user;
  P.t->set_reduce(c->inner, reduce ? reduce_through : NULL, reduce ? c : NULL);
}

int tc_cuda_step(tc_cuda *c, int buf, const tc_optim *o, float lr, int t) {
  return fwd(P.t->step(c->inner, buf, o, lr, t));
}
int tc_cuda_step_result(tc_cuda *c, int buf, float *loss) { return fwd(P.t->step_result(c->inner, buf, loss)); }
int tc_cuda_eval(tc_cuda *c, const void *host_slab, float pos_weight, float *loss, float *logit, float *T,
                 float *pair_w) {
  return fwd(P.t->eval(c->inner, host_slab, pos_weight, loss, logit, T, pair_w));
}
int tc_cuda_download(tc_cuda *c, tc_model *m) { return fwd(P.t->download(c->inner, m)); }
void tc_cuda_get_timing(const tc_cuda *c, tc_cuda_timing *t) { P.t->get_timing(c->inner, t); }
int tc_cuda_bench_h2d(size_t bytes, int reps, double *gb_per_s) {
  return loaded() ? fwd(P.t->bench_h2d(bytes, reps, gb_per_s)) : TWINCACHE_EDEVICE;
}
