/* tc_nccl.c — tc_nccl.h: NCCL through dlopen and the pointer types of
 * tc_nccl_abi.h, the unique id broadcast over MPI (tc_dist_bcast), as llm.c
 * does. Plain C: the CUDA stream is only passed through. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_error.h"
#include "tc_nccl.h"
#include "tc_nccl_abi.h"
#include "twincache_format.h"

#define TC_NCCL_SONAME "libnccl.so.2"

struct tc_nccl {
  void *lib;
  char path[512]; /* what was opened */
  int version;    /* NCCL_VERSION_CODE */
  tc_nccl_comm comm;
  tc_nccl_get_version_fn get_version;
  tc_nccl_get_unique_id_fn get_unique_id;
  tc_nccl_comm_init_rank_fn comm_init_rank;
  tc_nccl_all_reduce_fn all_reduce;
  tc_nccl_group_fn group_start, group_end;
  tc_nccl_comm_destroy_fn comm_destroy;
  tc_nccl_get_error_string_fn get_error_string;
};

/* "ncclAllReduce: unhandled cuda error (NCCL error 1; ...)" */
static int nccl_failed(const tc_nccl *n, const char *call, int result) {
  const char *text = n->get_error_string ? n->get_error_string(result) : NULL;
  return tc_error_set(TWINCACHE_EDEVICE, "%s: %s (NCCL error %d; NCCL_DEBUG=WARN prints NCCL's own "
                      "reason)", call, text ? text : "no error string", result);
}
#define ncclCheck(n, call, name)                    \
  do {                                              \
    int r_ = (call);                                \
    if (r_ != TC_NCCL_SUCCESS) return nccl_failed((n), (name), r_); \
  } while (0)

/* Opens the first library of the search order (tc_nccl.h); its dlerror
 * when none loads. */
static int nccl_load(tc_nccl *n, const char *library) {
  const char *env = getenv("TWINCACHE_NCCL_LIBRARY");
  const char *tries[3] = {NULL, NULL, NULL};
  int k = 0;
  if (library) tries[k++] = library;
  else if (env && env[0]) tries[k++] = env; /* set: the user's choice, alone */
  else {
    tries[k++] = TC_NCCL_SONAME;
#ifdef TC_NCCL_ROOT_LIBRARY
    tries[k++] = TC_NCCL_ROOT_LIBRARY; /* -DTWINCACHE_NCCL_ROOT at configure time */
#endif
  }
  char why[512] = "";
  for (int i = 0; i < k; i++) {
    dlerror();
    n->lib = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
    if (n->lib) {
      snprintf(n->path, sizeof n->path, "%s", tries[i]);
      return 0;
    }
    const char *e = dlerror();
    if (i == 0) snprintf(why, sizeof why, "%s", e ? e : tries[i]);
  }
  return tc_error_set(TWINCACHE_EDEVICE, "cannot load NCCL (%s%s): %s; the CUDA backend under mpirun "
                      "sums gradients with NCCL: install it (Debian/Ubuntu libnccl2 from NVIDIA's CUDA "
                      "repository, or pip install nvidia-nccl-cu13) and point TWINCACHE_NCCL_LIBRARY at "
                      "its libnccl.so.2, or train on the CPU (--device cpu)",
                      tries[0], library ? "" : env && env[0] ? ", from TWINCACHE_NCCL_LIBRARY" : "", why);
}

/* Every entry point, by name. */
static int nccl_resolve(tc_nccl *n) {
  struct {
    const char *name;
    void **slot;
  } syms[] = {
      {"ncclGetVersion", (void **)&n->get_version},
      {"ncclGetUniqueId", (void **)&n->get_unique_id},
      {"ncclCommInitRank", (void **)&n->comm_init_rank},
      {"ncclAllReduce", (void **)&n->all_reduce},
      {"ncclGroupStart", (void **)&n->group_start},
      {"ncclGroupEnd", (void **)&n->group_end},
      {"ncclCommDestroy", (void **)&n->comm_destroy},
      {"ncclGetErrorString", (void **)&n->get_error_string},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    *syms[i].slot = dlsym(n->lib, syms[i].name);
    if (!*syms[i].slot)
      return tc_error_set(TWINCACHE_EDEVICE, "%s is not NCCL 2: it has no symbol %s", n->path,
                          syms[i].name);
  }
  return 0;
}

static int nccl_join(tc_nccl *n, const tc_dist *d) {
  ncclCheck(n, n->get_version(&n->version), "ncclGetVersion");
  tc_nccl_unique_id id;
  memset(&id, 0, sizeof id);
  if (d->rank == 0) ncclCheck(n, n->get_unique_id(&id), "ncclGetUniqueId");
  if (tc_dist_bcast(d, &id, sizeof id, 0) != 0)
    return tc_error_wrap(TWINCACHE_EDEVICE, "broadcasting the ncclUniqueId");
  ncclCheck(n, n->comm_init_rank(&n->comm, d->world, id, d->rank), "ncclCommInitRank");
  return 0;
}

int tc_nccl_open(tc_nccl **out, const tc_dist *d, const char *library) {
  *out = NULL;
  tc_nccl *n = calloc(1, sizeof *n);
  if (!n) return tc_error_set(TWINCACHE_ENOMEM, "out of memory for the NCCL context");
  if (nccl_load(n, library) != 0 || nccl_resolve(n) != 0 || nccl_join(n, d) != 0) {
    int rc = TWINCACHE_EDEVICE;
    if (n->lib) dlclose(n->lib); /* no communicator was made */
    free(n);
    return rc;
  }
  *out = n;
  return 0;
}

void tc_nccl_close(tc_nccl *n) {
  if (!n) return;
  if (n->comm) n->comm_destroy(n->comm);
  /* the library stays loaded: NCCL keeps process-wide state (its CUDA
   * kernels' module, environment caches) that unloading would pull away */
  free(n);
}

int tc_nccl_sum(tc_nccl *n, float *f32, size_t n32, double *f64, size_t n64, void *stream) {
  ncclCheck(n, n->group_start(), "ncclGroupStart");
  int r = TC_NCCL_SUCCESS;
  if (n32) r = n->all_reduce(f32, f32, n32, TC_NCCL_FLOAT32, TC_NCCL_SUM, n->comm, stream);
  if (r == TC_NCCL_SUCCESS && n64)
    r = n->all_reduce(f64, f64, n64, TC_NCCL_FLOAT64, TC_NCCL_SUM, n->comm, stream);
  int end = n->group_end(); /* closes the group on failure too */
  if (r != TC_NCCL_SUCCESS) return nccl_failed(n, "ncclAllReduce", r);
  ncclCheck(n, end, "ncclGroupEnd");
  return 0;
}

void tc_nccl_describe(const tc_nccl *n, char *name, size_t cap) {
  /* NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after */
  int v = n->version, major, minor;
  if (v >= 10000) major = v / 10000, minor = v / 100 % 100;
  else major = v / 1000, minor = v / 100 % 10;
  snprintf(name, cap, "NCCL %d.%d.%d (%s)", major, minor, v % 100, n->path);
}
