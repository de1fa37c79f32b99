/* tc_dist_dlopen.c — tc_dist.h when twincache was built without an MPI (the
 * portable wheel, a machine without libopenmpi-dev): run directly, every
 * process is rank 0 of 1 and nothing is loaded; started by an MPI launcher,
 * the MPI library is loaded with dlopen, as the CUDA backend loads NCCL, and
 * the job trains data-parallel as the linked build does (tc_dist_mpi.c).
 *
 * Which library: $TWINCACHE_MPI_LIBRARY when set (alone: the user's
 * choice), else libmpi.so.40 (Open MPI 3-5), libmpich.so.12 and
 * libmpi.so.12 (MPICH, Intel MPI) by the dynamic loader's search — the
 * library of the mpirun that started the job, found through the
 * LD_LIBRARY_PATH that `module load` sets. tc_mpi_abi.h says how each ABI's
 * handles are had. A launcher that starts several ranks when no library
 * loads is refused: each would otherwise train alone on the whole cache. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_dist.h"
#include "tc_error.h"
#include "tc_launch.h"
#include "tc_mpi_abi.h"
#include "twincache_format.h"

typedef void (*fn)(void); /* any entry point, cast to its type at the call */
typedef union {
  void *p; /* Open MPI */
  int i;   /* MPICH */
} handle;

/* the one loaded MPI of this process (the training thread alone uses it) */
static struct {
  void *lib;
  char path[512], version[128];
  int ompi; /* 1: Open MPI's ABI, 0: MPICH's */
  handle comm_world, f32, f64, byte, sum, info_null, errors_return;
  void *in_place;
  int comm_type_shared;
  fn init, finalize, abort_, set_errhandler, comm_rank, comm_size, split_type, comm_free, allreduce,
      bcast, error_string, library_version;
} M;

/* The world size the launcher announced (0: it did not say, or not a
 * number): Open MPI's, PMI's, and srun's for PMIx, which names no size. */
static long announced_world(const char **var, const char **val) {
  static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", NULL};
  for (int i = 0; sizes[i]; i++) {
    const char *v = getenv(sizes[i]);
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v && end != v && n > 0) {
      *var = sizes[i], *val = v;
      return n;
    }
  }
  return 0;
}

static int mpi_failed(const char *call, int err) {
  char msg[TC_MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (((int (*)(int, char *, int *))M.error_string)(err, msg, &len) != TC_MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", err);
  return tc_error_set(TWINCACHE_EIO, "%s: %s", call, msg);
}

/* ---- the calls, one wrapper per entry point over the two ABIs ---- */
static int call_set_errhandler(handle comm, handle eh) {
  return M.ompi ? ((int (*)(void *, void *))M.set_errhandler)(comm.p, eh.p)
                : ((int (*)(int, int))M.set_errhandler)(comm.i, eh.i);
}
static int call_comm_rank(handle comm, int *r) {
  return M.ompi ? ((int (*)(void *, int *))M.comm_rank)(comm.p, r) : ((int (*)(int, int *))M.comm_rank)(comm.i, r);
}
static int call_comm_size(handle comm, int *n) {
  return M.ompi ? ((int (*)(void *, int *))M.comm_size)(comm.p, n) : ((int (*)(int, int *))M.comm_size)(comm.i, n);
}
static int call_split_shared(handle comm, int key, handle *out) {
  return M.ompi ? ((int (*)(void *, int, int, void *, void **))M.split_type)(
                      comm.p, M.comm_type_shared, key, M.info_null.p, &out->p)
                : ((int (*)(int, int, int, int, int *))M.split_type)(comm.i, M.comm_type_shared, key,
                                                                      M.info_null.i, &out->i);
}
static int call_comm_free(handle *comm) {
  return M.ompi ? ((int (*)(void **))M.comm_free)(&comm->p) : ((int (*)(int *))M.comm_free)(&comm->i);
}
static int call_allreduce(void *buf, int count, handle type) {
  return M.ompi ? ((int (*)(const void *, void *, int, void *, void *, void *))M.allreduce)(
                      M.in_place, buf, count, type.p, M.sum.p, M.comm_world.p)
                : ((int (*)(const void *, void *, int, int, int, int))M.allreduce)(
                      M.in_place, buf, count, type.i, M.sum.i, M.comm_world.i);
}
static int call_bcast(void *buf, int count, int root) {
  return M.ompi ? ((int (*)(void *, int, void *, int, void *))M.bcast)(buf, count, M.byte.p, root, M.comm_world.p)
                : ((int (*)(void *, int, int, int, int))M.bcast)(buf, count, M.byte.i, root, M.comm_world.i);
}
static void call_abort(int status) {
  if (M.ompi) ((int (*)(void *, int))M.abort_)(M.comm_world.p, status);
  else ((int (*)(int, int))M.abort_)(M.comm_world.i, status);
}

/* ---- loading ---- */
static int load_library(void) {
  const char *env = getenv("TWINCACHE_MPI_LIBRARY");
  /* the launcher's own MPI first: Open MPI's mpirun sets OMPI_*, MPICH's
   * hydra and Intel's PMI_* */
  static const char *const ompi_first[] = {"libmpi.so.40", "libmpich.so.12", "libmpi.so.12", NULL};
  static const char *const mpich_first[] = {"libmpich.so.12", "libmpi.so.12", "libmpi.so.40", NULL};
  const char *const *tries = getenv("OMPI_COMM_WORLD_SIZE") ? ompi_first : mpich_first;
  const char *chosen[2] = {env, NULL};
  if (env && env[0]) tries = chosen;
  char why[512] = "";
  for (int i = 0; tries[i]; i++) {
    dlerror();
    /* global: Open MPI's components, themselves dlopened, resolve libmpi's
     * symbols through the global scope */
    M.lib = dlopen(tries[i], RTLD_NOW | RTLD_GLOBAL);
    if (M.lib) {
      snprintf(M.path, sizeof M.path, "%s", tries[i]);
      return 0;
    }
    const char *e = dlerror();
    if (i == 0) snprintf(why, sizeof why, "%s", e ? e : tries[i]);
  }
  return tc_error_set(TWINCACHE_EIO, "cannot load an MPI library (%s): %s", tries == chosen
                      ? "TWINCACHE_MPI_LIBRARY" : "libmpi.so.40, libmpich.so.12 or libmpi.so.12", why);
}

static int resolve(void) {
  struct {
    const char *name;
    fn *slot;
  } syms[] = {
      {"MPI_Init", &M.init},
      {"MPI_Finalize", &M.finalize},
      {"MPI_Abort", &M.abort_},
      {"MPI_Comm_set_errhandler", &M.set_errhandler},
      {"MPI_Comm_rank", &M.comm_rank},
      {"MPI_Comm_size", &M.comm_size},
      {"MPI_Comm_split_type", &M.split_type},
      {"MPI_Comm_free", &M.comm_free},
      {"MPI_Allreduce", &M.allreduce},
      {"MPI_Bcast", &M.bcast},
      {"MPI_Error_string", &M.error_string},
      {"MPI_Get_library_version", &M.library_version},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    *(void **)syms[i].slot = dlsym(M.lib, syms[i].name); /* POSIX's idiom for a function's address */
    if (!*syms[i].slot)
      return tc_error_set(TWINCACHE_EIO, "%s is not an MPI 3 library: it has no symbol %s", M.path,
                          syms[i].name);
  }
  /* allowed before MPI_Init (MPI 3.1): which ABI, by the library's own words */
  char lib[TC_MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  ((int (*)(char *, int *))M.library_version)(lib, &len);
  lib[sizeof lib - 1] = '\0';
  /* its first line, runs of blanks as one space ("MPICH Version:\t4.0.2") */
  size_t k = 0;
  for (const char *c = lib; *c && *c != '\n' && *c != ',' && k + 1 < sizeof M.version; c++)
    if (!(*c == ' ' || *c == '\t') || (k > 0 && M.version[k - 1] != ' ')) M.version[k++] = *c == '\t' ? ' ' : *c;
  M.version[k] = '\0';
  void *world = dlsym(M.lib, TC_OMPI_COMM_WORLD);
  if (world) {
    struct {
      const char *name;
      void **slot;
    } objs[] = {{TC_OMPI_FLOAT, &M.f32.p},     {TC_OMPI_DOUBLE, &M.f64.p},
                {TC_OMPI_BYTE, &M.byte.p},     {TC_OMPI_OP_SUM, &M.sum.p},
                {TC_OMPI_INFO_NULL, &M.info_null.p}, {TC_OMPI_ERRORS_RETURN, &M.errors_return.p}};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
      if (!(*objs[i].slot = dlsym(M.lib, objs[i].name)))
        return tc_error_set(TWINCACHE_EIO, "%s exports %s but not %s: not an Open MPI this build knows",
                            M.path, TC_OMPI_COMM_WORLD, objs[i].name);
    M.ompi = 1, M.comm_world.p = world, M.in_place = TC_OMPI_IN_PLACE;
    M.comm_type_shared = TC_OMPI_COMM_TYPE_SHARED;
    return 0;
  }
  /* MPICH's ABI has no exported handles; its libraries say whose they are */
  static const char *const mpich_like[] = {"MPICH", "Intel(R) MPI", "MVAPICH", "CRAY MPICH", NULL};
  for (int i = 0; mpich_like[i]; i++)
    if (strstr(lib, mpich_like[i])) {
      M.ompi = 0, M.in_place = TC_MPICH_IN_PLACE, M.comm_type_shared = TC_MPICH_COMM_TYPE_SHARED;
      M.comm_world.i = TC_MPICH_COMM_WORLD, M.f32.i = TC_MPICH_FLOAT, M.f64.i = TC_MPICH_DOUBLE;
      M.byte.i = TC_MPICH_BYTE, M.sum.i = TC_MPICH_OP_SUM, M.info_null.i = TC_MPICH_INFO_NULL;
      M.errors_return.i = TC_MPICH_ERRORS_RETURN;
      return 0;
    }
  return tc_error_set(TWINCACHE_EIO, "%s (\"%s\") is neither Open MPI's ABI (no %s) nor MPICH's: build "
                      "twincache from source against this MPI (README \"Data-parallel training\")",
                      M.path, M.version, TC_OMPI_COMM_WORLD);
}

static void unload(void) {
  if (M.lib) dlclose(M.lib);
  memset(&M, 0, sizeof M);
}

int tc_dist_init(tc_dist *d, int *argc, char ***argv) {
  *d = (tc_dist){.rank = 0, .world = 1, .local_rank = 0, .joined = 0};
  if (!tc_launch_by_mpi()) return 0;
  const char *var = NULL, *val = NULL;
  long announced = announced_world(&var, &val);
  if (!M.lib && (load_library() != 0 || resolve() != 0)) {
    unload();
    if (announced <= 1) return 0; /* a world of one (or of a size nobody said): alone, as asked */
    return tc_error_wrap(TWINCACHE_EINVAL, "an MPI launcher started this process as one of %ld (%s=%s), "
                         "and this twincache-train (built without MPI) loads the MPI at run time; without "
                         "it each rank would train alone on the whole cache: set TWINCACHE_MPI_LIBRARY to "
                         "the libmpi.so of the mpirun you use, or start one process", announced, var, val);
  }
  int err = ((int (*)(int *, char ***))M.init)(argc, argv);
  if (err != TC_MPI_SUCCESS) return mpi_failed("MPI_Init", err);
  d->joined = 1;
  call_set_errhandler(M.comm_world, M.errors_return);
  if ((err = call_comm_rank(M.comm_world, &d->rank)) != TC_MPI_SUCCESS ||
      (err = call_comm_size(M.comm_world, &d->world)) != TC_MPI_SUCCESS)
    return mpi_failed("MPI_Comm_rank/size", err);
  /* another MPI than the launcher's comes up as a world of one per rank */
  if (announced > 1 && d->world != announced)
    return tc_error_set(TWINCACHE_EINVAL, "the launcher started %ld ranks (%s=%s) but %s (%s) sees a world "
                        "of %d: it is not the launcher's MPI; set TWINCACHE_MPI_LIBRARY to the libmpi.so of "
                        "the mpirun you use", announced, var, val, M.path, M.version, d->world);
  handle node = {0};
  if ((err = call_split_shared(M.comm_world, d->rank, &node)) != TC_MPI_SUCCESS)
    return mpi_failed("MPI_Comm_split_type", err);
  err = call_comm_rank(node, &d->local_rank);
  call_comm_free(&node);
  return err != TC_MPI_SUCCESS ? mpi_failed("MPI_Comm_rank (node)", err) : 0;
}

void tc_dist_finalize(tc_dist *d) {
  if (d->joined) ((int (*)(void))M.finalize)();
  d->joined = 0;
  /* the library stays loaded: MPI may keep threads and handlers until exit */
}

void tc_dist_abort(const tc_dist *d, int status) {
  if (d->joined && d->world > 1) {
    fflush(stdout), fflush(stderr);
    call_abort(status);
  }
}

/* MPI counts are int: sums of more elements go in pieces. */
static int sum(const tc_dist *d, void *buf, size_t n, size_t size, handle type) {
  if (d->world == 1) return 0;
  char *p = buf;
  while (n > 0) {
    int count = n > INT_MAX ? INT_MAX : (int)n;
    int err = call_allreduce(p, count, type);
    if (err != TC_MPI_SUCCESS) return mpi_failed("MPI_Allreduce", err);
    p += (size_t)count * size, n -= (size_t)count;
  }
  return 0;
}

int tc_dist_sum_f32(const tc_dist *d, float *buf, size_t n) { return sum(d, buf, n, sizeof(float), M.f32); }
int tc_dist_sum_f64(const tc_dist *d, double *buf, size_t n) { return sum(d, buf, n, sizeof(double), M.f64); }

int tc_dist_bcast(const tc_dist *d, void *buf, size_t bytes, int root) {
  if (d->world == 1) return 0;
  if (bytes > INT_MAX) return tc_error_set(TWINCACHE_EINVAL, "MPI_Bcast of %zu bytes: too large", bytes);
  int err = call_bcast(buf, (int)bytes, root);
  return err != TC_MPI_SUCCESS ? mpi_failed("MPI_Bcast", err) : 0;
}

void tc_dist_describe(char *name, size_t cap) {
  if (M.lib)
    snprintf(name, cap, "MPI (%s, loaded at run time from %s)", M.version, M.path);
  else
    snprintf(name, cap, "none (no MPI launcher: MPI is loaded at run time under one)");
}
