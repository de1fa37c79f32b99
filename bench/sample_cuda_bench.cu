// sample_cuda_bench.cu — the fresh-world sampler kernel (twincache_sample_cuda)
// on real caches: bit for bit against the CPU loader, then timed.
//
// For each cache, two loaders over the same stream (samples = FRESH, the
// same rows, batch and epochs): one dense (scm/'s fresh worlds, the CPU
// path users get today), one SCM (the packed SCMs the kernel takes). Every
// SCM slab is copied to the device as it is, sampled there, and its base
// (G,S,N) and twin worlds (G,K,S,N) copied back and compared with the
// dense batch of the same position: every graph, padding included. Then:
//   kernel   graphs/s of twincache_sample_cuda on the last batch, repeated,
//            event-timed (device time only: the slab is on the device);
//   cpu 1t   graphs/s of the dense fresh loader with one decode thread over
//            one epoch, or --cpu-graphs M graphs (0: not timed) (wall time:
//            what one CPU thread sustains).
// A cache the SCM batch cannot carry (soft worlds, several targets per
// world) is reported as refused by the loader; a batch of iSCM graphs as
// refused by the kernel (both by design: FORMAT.md 3.8, twincache_kernels.h).
//
// --emulate runs the kernel's host emulation (twincache_sample_cpu, the same
// per-thread code compiled as C) instead of the device: the program's own
// logic checked on a machine without a GPU (tools/gpu-check.sh --dry-run).
// --probe exits 0 when a CUDA device is usable, 77 when not, and does nothing
// else.
//
// Prints one table row per cache and ends with "sample-check: ok" or names
// what differed. Exit: 0 every graph equal; 1 a difference or an I/O
// failure; 2 usage; 77 no usable GPU (without --emulate).
//
// usage: bench_sample_cuda [--emulate] [--rows S] [--batch G] [--epochs E]
//                          [--repeat R] [--cpu-graphs M] CACHE...
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tc_bench_cuda.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"
#include "twincache_loader.h"

struct opts {
  int emulate;
  uint32_t rows, batch, epochs, repeat;
  uint64_t cpu_graphs; // graphs the one-thread CPU timing reads at most (0: no CPU timing)
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int open_loader(const char *path, const struct opts *o, int layout, uint32_t threads, uint32_t epochs,
                       twincache_loader **out) {
  twincache_loader_options lo;
  twincache_loader_options_init(&lo);
  lo.samples = TWINCACHE_SAMPLES_FRESH;
  lo.rows = o->rows;
  lo.batch_size = o->batch;
  lo.epochs = epochs;
  lo.threads = threads;
  lo.layout = layout;
  int rc = twincache_loader_open(path, &lo, NULL, out);
  if (rc != TWINCACHE_OK) fprintf(stderr, "sample-check: %s: %s\n", path, twincache_last_error());
  return rc;
}

// The kernel's input: a slab's arrays through the SCM layout's offsets
// (base: the host slab or its device copy), the ziggurat tables given.
static twincache_scm_batch view_of(const twincache_scm_layout *L, const uint8_t *s, uint32_t graphs,
                                   const double *zx, const double *zr) {
  twincache_scm_batch k;
  memset(&k, 0, sizeof k);
  k.graphs = graphs;
  k.nodes = L->nodes;
  k.inter = L->inter;
  k.hidden = L->hidden;
  k.rows = L->rows;
  k.n_nodes = (const uint32_t *)(s + L->n_nodes);
  k.n_inter = (const uint32_t *)(s + L->n_inter);
  k.flags = s + L->flags;
  k.noise = s + L->noise;
  k.key = (const uint64_t *)(s + L->key);
  k.order = (const uint32_t *)(s + L->order);
  k.adj = s + L->adj;
  k.weight = (const float *)(s + L->weight);
  k.mlp = L->hidden ? (const float *)(s + L->mlp) : NULL;
  k.noise_scale = (const float *)(s + L->noise_scale);
  k.target = (const uint16_t *)(s + L->target);
  k.kind = s + L->kind;
  k.value = (const float *)(s + L->value);
  k.desc = s + L->desc;
  k.zig_x = zx;
  k.zig_ratio = zr;
  k.mech = s + L->mech;
  k.het_w = (const float *)(s + L->het_w);
  k.het_c = (const float *)(s + L->het_c);
  return k;
}

// The sampler's buffers, on the device or (emulate) on the host.
struct bufs {
  float *noise, *mean, *sd, *base, *inter;
  uint8_t *slab;
  double *zx, *zr;
};

static void *alloc_on(int emulate, size_t bytes) {
  void *p = NULL;
  if (emulate) {
    p = calloc(bytes ? bytes : 1, 1);
    if (!p) {
      fprintf(stderr, "sample-check: out of memory (%zu bytes)\n", bytes);
      exit(1);
    }
  } else {
    cudaCheckOrExit(cudaMalloc(&p, bytes ? bytes : 1));
  }
  return p;
}
static void free_on(int emulate, void *p) {
  if (emulate) free(p);
  else cudaFree(p);
}

// Samples the batch whose host view is hv (slab on the host) into the
// buffers; on the device the slab is copied first. Returns the launcher's
// status (TWINCACHE_KERNELS_EINVAL: refused).
static int sample(const struct opts *o, const twincache_scm_layout *L, const twincache_batch *b, struct bufs *d,
                  const double *zx, const double *zr) {
  twincache_scm_batch hv = view_of(L, (const uint8_t *)b->slab, b->n_graphs, zx, zr);
  if (o->emulate) return twincache_sample_cpu(&hv, d->noise, d->mean, d->sd, d->base, d->inter);
  int rc = twincache_sample_check(&hv); // the host copy says what the device would refuse
  if (rc) return rc;
  cudaCheckOrExit(cudaMemcpy(d->slab, b->slab, L->bytes, cudaMemcpyHostToDevice));
  twincache_scm_batch dv = view_of(L, d->slab, b->n_graphs, d->zx, d->zr);
  kernelCheckOrExit(twincache_sample_cuda(&dv, d->noise, d->mean, d->sd, d->base, d->inter, NULL));
  cudaCheckOrExit(cudaDeviceSynchronize());
  return 0;
}

// One cache: the check, then the timings. Returns the number of graphs that
// differ (or 1 on a failure to read).
static uint64_t one_cache(const char *path, const struct opts *o, const double *zx, const double *zr) {
  twincache_loader *ld = NULL, *ls = NULL;
  if (open_loader(path, o, TWINCACHE_LAYOUT_DENSE, 2, o->epochs, &ld)) return 1;
  if (open_loader(path, o, TWINCACHE_LAYOUT_SCM, 2, o->epochs, &ls)) {
    twincache_loader_close(ld);
    return 1;
  }
  const twincache_scm_layout *L = twincache_loader_scm_layout(ls);
  const uint32_t G = L->graphs, N = L->nodes, K = L->inter, S = L->rows;
  const size_t sn = (size_t)G * S * N, ksn = (size_t)G * K * S * N;
  struct bufs d;
  d.noise = (float *)alloc_on(o->emulate, sn * 4);
  d.mean = (float *)alloc_on(o->emulate, (size_t)G * N * 4);
  d.sd = (float *)alloc_on(o->emulate, (size_t)G * N * 4);
  d.base = (float *)alloc_on(o->emulate, sn * 4);
  d.inter = (float *)alloc_on(o->emulate, ksn * 4);
  d.slab = o->emulate ? NULL : (uint8_t *)alloc_on(0, L->bytes);
  d.zx = o->emulate ? NULL : (double *)alloc_on(0, 257 * sizeof(double));
  d.zr = o->emulate ? NULL : (double *)alloc_on(0, 256 * sizeof(double));
  if (!o->emulate) {
    cudaCheckOrExit(cudaMemcpy(d.zx, zx, 257 * sizeof(double), cudaMemcpyHostToDevice));
    cudaCheckOrExit(cudaMemcpy(d.zr, zr, 256 * sizeof(double), cudaMemcpyHostToDevice));
  }
  float *base_h = o->emulate ? d.base : (float *)malloc(sn * 4), *inter_h = o->emulate ? d.inter : (float *)malloc(ksn * 4);
  uint8_t *last = (uint8_t *)malloc(L->bytes); // the last sampled slab, for the timing
  if (!base_h || !inter_h || !last) {
    fprintf(stderr, "sample-check: out of memory\n");
    exit(1);
  }
  uint64_t graphs = 0, bad = 0, refused_batches = 0, batches = 0;
  uint32_t last_graphs = 0;
  const char *loader_refusal = NULL;
  char refusal[512];
  for (;;) {
    twincache_batch *bd = NULL, *bs = NULL;
    int rd = twincache_loader_next(ld, &bd), rs = twincache_loader_next(ls, &bs);
    if (rs != TWINCACHE_OK && rs != TWINCACHE_END && rd == TWINCACHE_OK && graphs == 0 && refused_batches == 0) {
      snprintf(refusal, sizeof refusal, "%s", twincache_last_error()); // soft or multi-target: by design
      loader_refusal = refusal;
      twincache_loader_release(ld, bd);
      break;
    }
    if (rd != rs) {
      fprintf(stderr, "sample-check: %s: the dense loader says %d, the SCM loader %d (%s)\n", path, rd, rs,
              twincache_last_error());
      bad++;
      break;
    }
    if (rd != TWINCACHE_OK) break;
    batches++;
    if (bd->seq != bs->seq || bd->n_graphs != bs->n_graphs ||
        memcmp(bd->graph_id, bs->graph_id, (size_t)G * sizeof *bd->graph_id)) {
      fprintf(stderr, "sample-check: %s: batch %llu: the two loaders' streams differ\n", path,
              (unsigned long long)bd->seq);
      bad++;
    } else if (sample(o, L, bs, &d, zx, zr) == TWINCACHE_KERNELS_EINVAL) {
      refused_batches++; // iSCM graphs: the kernel refuses them (twincache_kernels.h)
    } else {
      if (!o->emulate) {
        cudaCheckOrExit(cudaMemcpy(base_h, d.base, sn * 4, cudaMemcpyDeviceToHost));
        cudaCheckOrExit(cudaMemcpy(inter_h, d.inter, ksn * 4, cudaMemcpyDeviceToHost));
      }
      for (uint32_t g = 0; g < G; g++) {
        int differs = memcmp(base_h + (size_t)g * S * N, bd->base + (size_t)g * S * N, (size_t)S * N * 4) ||
                      memcmp(inter_h + (size_t)g * K * S * N, bd->inter + (size_t)g * K * S * N,
                             (size_t)K * S * N * 4);
        if (differs && bad < 5)
          fprintf(stderr, "sample-check: %s: batch %llu graph %u (id %llu): the worlds differ\n", path,
                  (unsigned long long)bd->seq, g, (unsigned long long)bd->graph_id[g]);
        bad += differs;
        graphs += g < bd->n_graphs;
      }
      memcpy(last, bs->slab, L->bytes);
      last_graphs = bs->n_graphs;
    }
    twincache_loader_release(ld, bd);
    twincache_loader_release(ls, bs);
  }
  twincache_loader_close(ld);
  twincache_loader_close(ls);

  // the sampler alone, on the last slab, repeated
  double kernel_gps = 0;
  if (last_graphs) {
    twincache_batch fake;
    memset(&fake, 0, sizeof fake);
    fake.slab = last;
    fake.n_graphs = last_graphs;
    if (o->emulate) {
      double t0 = now_s();
      for (uint32_t r = 0; r < o->repeat; r++) sample(o, L, &fake, &d, zx, zr);
      kernel_gps = (double)last_graphs * o->repeat / (now_s() - t0);
    } else {
      cudaCheckOrExit(cudaMemcpy(d.slab, last, L->bytes, cudaMemcpyHostToDevice));
      twincache_scm_batch dv = view_of(L, d.slab, last_graphs, d.zx, d.zr);
      cudaEvent_t e0, e1;
      cudaCheckOrExit(cudaEventCreate(&e0));
      cudaCheckOrExit(cudaEventCreate(&e1));
      kernelCheckOrExit(twincache_sample_cuda(&dv, d.noise, d.mean, d.sd, d.base, d.inter, NULL)); // warm-up
      cudaCheckOrExit(cudaEventRecord(e0, 0));
      for (uint32_t r = 0; r < o->repeat; r++)
        kernelCheckOrExit(twincache_sample_cuda(&dv, d.noise, d.mean, d.sd, d.base, d.inter, NULL));
      cudaCheckOrExit(cudaEventRecord(e1, 0));
      cudaCheckOrExit(cudaEventSynchronize(e1));
      float ms = 0;
      cudaCheckOrExit(cudaEventElapsedTime(&ms, e0, e1));
      kernel_gps = ms > 0 ? (double)last_graphs * o->repeat / (ms * 1e-3) : 0;
      cudaEventDestroy(e0);
      cudaEventDestroy(e1);
    }
  }
  // one CPU decode thread making the dense fresh worlds
  double cpu_gps = 0;
  if (!loader_refusal && o->cpu_graphs) {
    twincache_loader *l1 = NULL;
    if (open_loader(path, o, TWINCACHE_LAYOUT_DENSE, 1, 1, &l1) == TWINCACHE_OK) {
      uint64_t n = 0;
      twincache_batch *b;
      double t0 = now_s();
      while (n < o->cpu_graphs && twincache_loader_next(l1, &b) == TWINCACHE_OK) {
        n += b->n_graphs;
        twincache_loader_release(l1, b);
      }
      double t = now_s() - t0;
      cpu_gps = t > 0 ? (double)n / t : 0;
      twincache_loader_close(l1);
    }
  }
  const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  if (loader_refusal)
    printf("| %-22s | %4u | %3u | %2u | %7s | %6s | %10s | %9s | %6s | refused by the SCM loader: %.80s\n", name, S,
           N, K, "-", "-", "-", "-", "-", loader_refusal);
  else
  {
    char cpu_s[32] = "-", ratio_s[32] = "-";
    if (cpu_gps > 0) {
      snprintf(cpu_s, sizeof cpu_s, "%.0f", cpu_gps);
      snprintf(ratio_s, sizeof ratio_s, "%.1f", kernel_gps / cpu_gps);
    }
    printf("| %-22s | %4u | %3u | %2u | %7llu | %6llu | %10.0f | %9s | %6s | %llu of %llu batches iSCM "
           "(refused)\n",
           name, S, N, K, (unsigned long long)graphs, (unsigned long long)bad, kernel_gps, cpu_s, ratio_s,
           (unsigned long long)refused_batches, (unsigned long long)batches);
  }
  fflush(stdout);
  free_on(o->emulate, d.noise);
  free_on(o->emulate, d.mean);
  free_on(o->emulate, d.sd);
  free_on(o->emulate, d.base);
  free_on(o->emulate, d.inter);
  if (!o->emulate) {
    cudaFree(d.slab);
    cudaFree(d.zx);
    cudaFree(d.zr);
    free(base_h);
    free(inter_h);
  }
  free(last);
  return bad;
}

static int parse_u32(const char *flag, const char *v, uint32_t lo, uint32_t hi, uint32_t *out) {
  char *end = NULL;
  unsigned long long x = v ? strtoull(v, &end, 10) : 0;
  if (!v || !*v || *end || x < lo || x > hi) {
    fprintf(stderr, "bench_sample_cuda: %s must be an integer in [%u, %u] (got %s)\n", flag, lo, hi,
            v ? v : "nothing");
    return 2;
  }
  *out = (uint32_t)x;
  return 0;
}

int main(int argc, char **argv) {
  struct opts o = {0, 64, 256, 1, 20, UINT64_MAX};
  int probe = 0, first = 0;
  uint32_t cpu = UINT32_MAX;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc = 0;
    if (!strcmp(a, "--emulate")) o.emulate = 1;
    else if (!strcmp(a, "--probe")) probe = 1;
    else if (!strcmp(a, "--rows")) rc = parse_u32(a, i + 1 < argc ? argv[++i] : NULL, 1, 65535, &o.rows);
    else if (!strcmp(a, "--batch")) rc = parse_u32(a, i + 1 < argc ? argv[++i] : NULL, 1, 65536, &o.batch);
    else if (!strcmp(a, "--epochs")) rc = parse_u32(a, i + 1 < argc ? argv[++i] : NULL, 1, 1000, &o.epochs);
    else if (!strcmp(a, "--repeat")) rc = parse_u32(a, i + 1 < argc ? argv[++i] : NULL, 1, 100000, &o.repeat);
    else if (!strcmp(a, "--cpu-graphs")) rc = parse_u32(a, i + 1 < argc ? argv[++i] : NULL, 0, 1u << 30, &cpu);
    // (default: one epoch)
    else if (!strcmp(a, "--help")) {
      printf("usage: bench_sample_cuda [--emulate] [--probe] [--rows S] [--batch G] [--epochs E] [--repeat R]\n"
             "                         [--cpu-graphs M] CACHE...\n"
             "the fresh-world sampler kernel against the CPU loader, bit for bit, then timed\n");
      return 0;
    } else if (a[0] == '-' && a[1] == '-') {
      fprintf(stderr, "bench_sample_cuda: unknown flag %s (see --help)\n", a);
      return 2;
    } else if (!first) first = i;
    if (rc) return rc;
  }
  o.cpu_graphs = cpu == UINT32_MAX ? UINT64_MAX : cpu;
  int devices = 0;
  int have_gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  if (probe) return have_gpu ? 0 : 77;
  if (!first) {
    fprintf(stderr, "bench_sample_cuda: no cache given (see --help)\n");
    return 2;
  }
  if (!o.emulate && !have_gpu) {
    printf("bench_sample_cuda: no usable CUDA GPU, skipped (--emulate runs the host emulation)\n");
    return 77;
  }
  double zx[257], zr[256];
  twincache_sample_tables(zx, zr);
  printf("fresh-world sampler, %s, batch %u, %u epoch(s); kernel graphs/s: %s; cpu 1t: the dense fresh loader, "
         "one decode thread\n\n",
         o.emulate ? "host emulation (no device)" : "device", o.batch, o.epochs,
         o.emulate ? "the emulation's, wall time" : "event-timed, the slab on the device");
  printf("| %-22s | %4s | %3s | %2s | %7s | %6s | %10s | %9s | %6s | note\n", "cache", "S", "N", "K", "graphs",
         "differ", "kernel g/s", "cpu 1t g/s", "ratio");
  printf("|%s|------|-----|----|---------|--------|------------|-----------|--------|-----\n",
         "------------------------");
  uint64_t bad = 0;
  for (int i = first; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] == '-') {
      if (strcmp(argv[i], "--emulate") && strcmp(argv[i], "--probe")) i++; // a flag's value
      continue;
    }
    bad += one_cache(argv[i], &o, zx, zr);
  }
  if (bad) {
    printf("\nsample-check: FAILED: %llu graphs differ or could not be read\n", (unsigned long long)bad);
    return 1;
  }
  printf("\nsample-check: ok\n");
  return 0;
}
