// expand.cu — the compact-batch expansion on the device, twin of
// expand_cpu.c (contract in twincache_kernels.h).
//
// Grid: G*(K+1) blocks. Block (g, k < K) builds the twin world k of graph g,
// (S,N), a tile of rows at a time in shared memory:
//   1. column list: node of each stored column (from the mask's set bits)
//   2. load the tile's base rows (coalesced), a do() target column replaced
//      by the value, rows past the world's count (rows per world) 0
//   3. write the stored columns over it (reads coalesced along s)
//   4. store the tile into inter (coalesced)
// Block (g, K) writes the graph's other arrays. Floats move as uint32 bits.
//
// Each phase is a __host__ __device__ function of (thread, threads) looping
// over its elements; the kernel separates phases with __syncthreads(), and
// twincache_expand_emulate runs the same functions on the host for every
// thread in turn, so the indexing is tested without a GPU.
#include <cuda_runtime.h>
#include <string.h>

#include "tc_kernels_error.h"
#include "tc_node_body.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

#define TC_EXPAND_THREADS 256
#define TC_EXPAND_TILE 4096      // floats of one shared row tile (16 KiB)
#define TC_EXPAND_MAX_NODES 256  // the format's limit: column list capacity

#define HD __host__ __device__

static HD inline int tc_popc64(uint64_t x) {
#ifdef __CUDA_ARCH__
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

// The arrays of one graph, typed (as in expand_cpu.c).
struct tc_expand_graph {
  const uint32_t *c_base; // (S,N)
  const uint8_t *c_adj, *c_kind;
  const uint16_t *c_target;
  const uint32_t *c_value, *col_first;
  const uint64_t *col_mask; // (K,W)
  const uint32_t *cols;     // (*,S)
  const uint32_t *c_rows;   // (K+1): rows each world holds
  uint32_t n_nodes, n_inter;
  uint64_t graph_id;
  uint8_t valid;
};

static HD inline tc_expand_graph tc_graph_views(const uint8_t *c, const twincache_expand_offsets &o,
                                                int g) {
  size_t G = (size_t)g, K = (size_t)o.K, S = (size_t)o.S, N = (size_t)o.N, W = (size_t)o.W;
  tc_expand_graph v;
  v.c_base = (const uint32_t *)(c + o.c_base) + G * S * N;
  v.c_adj = c + o.c_adj + G * N * N;
  v.c_kind = c + o.c_kind + G * K;
  v.c_target = (const uint16_t *)(c + o.c_target) + G * K;
  v.c_value = (const uint32_t *)(c + o.c_value) + G * K;
  v.col_first = (const uint32_t *)(c + o.c_col_first) + G * K;
  v.col_mask = (const uint64_t *)(c + o.c_col_mask) + G * K * W;
  v.cols = (const uint32_t *)(c + o.c_cols);
  v.c_rows = (const uint32_t *)(c + o.c_rows) + G * (K + 1);
  v.n_nodes = ((const uint32_t *)(c + o.c_n_nodes))[g];
  v.n_inter = ((const uint32_t *)(c + o.c_n_inter))[g];
  v.graph_id = ((const uint64_t *)(c + o.c_graph_id))[g];
  v.valid = (c + o.c_valid)[g];
  return v;
}

// ---- block (g, K): every array but inter -------------------------------------
static HD void phase_graph_arrays(uint8_t *d, const twincache_expand_offsets &o, int g,
                                  const tc_expand_graph &v, int tid, int nt) {
  size_t G = (size_t)g, K = (size_t)o.K, S = (size_t)o.S, N = (size_t)o.N;
  uint32_t *base = (uint32_t *)(d + o.base) + G * S * N;
  for (size_t e = tid; e < S * N; e += nt) base[e] = v.c_base[e];
  uint8_t *adj = d + o.adj + G * N * N;
  for (size_t e = tid; e < N * N; e += nt) adj[e] = v.c_adj[e];
  uint8_t *target = d + o.target + G * K * N;
  uint32_t *value = (uint32_t *)(d + o.value) + G * K * N;
  for (size_t e = tid; e < K * N; e += nt) {
    size_t k = e / N, j = e % N;
    int hit = k < v.n_inter && j == v.c_target[k];
    target[e] = (uint8_t)hit;
    value[e] = hit ? v.c_value[k] : 0u;
  }
  uint8_t *kind = d + o.kind + G * K, *int_mask = d + o.int_mask + G * K;
  for (size_t k = tid; k < K; k += nt) {
    kind[k] = v.c_kind[k];
    int_mask[k] = k < v.n_inter;
  }
  uint8_t *node_mask = d + o.node_mask + G * N;
  for (size_t j = tid; j < N; j += nt) node_mask[j] = j < v.n_nodes;
  uint32_t *rows = (uint32_t *)(d + o.rows) + G * (K + 1); /* (K+1) */
  for (size_t w = tid; w < K + 1; w += nt) rows[w] = v.c_rows[w];
  if (tid == 0) {
    ((uint64_t *)(d + o.graph_id))[g] = v.graph_id;
    (d + o.valid)[g] = v.valid;
  }
}

// ---- block (g, k < K): twin world k -------------------------------------------
// Twin world k of a graph without intervention k: all zero.
static HD void phase_zero_world(uint32_t *out, size_t n, int tid, int nt) {
  for (size_t e = tid; e < n; e += nt) out[e] = 0u;
}

// 1. list[r] = node of the r-th stored column of (g,k), r < popcount(mask).
static HD void phase_col_list(uint16_t *list, const uint64_t *mask, int N, int tid, int nt) {
  for (int j = tid; j < N; j += nt) {
    uint64_t w = mask[j >> 6];
    if (!((w >> (j & 63)) & 1u)) continue;
    int r = tc_popc64(w & ((1ull << (j & 63)) - 1ull));
    for (int q = 0; q < (j >> 6); q++) r += tc_popc64(mask[q]);
    list[r] = (uint16_t)j;
  }
}

// Number of stored columns of (g,k) with node < N.
static HD int tc_col_count(const uint64_t *mask, int N, int W) {
  int n = 0;
  for (int q = 0; q < W; q++) {
    uint64_t w = mask[q];
    int bits = N - 64 * q;
    if (bits < 64) w &= (1ull << bits) - 1ull;
    n += tc_popc64(w);
  }
  return n;
}

// 2. tile rows [r0, r0+rows) of base, column `fill` replaced by fill_value;
// rows the world does not hold (r0 + e/N >= live) are 0.
static HD void phase_load_tile(uint32_t *tile, const uint32_t *base_rows, size_t n_elems, int N,
                               int fill, uint32_t fill_value, int r0, int live, int tid, int nt) {
  for (size_t e = tid; e < n_elems; e += nt) {
    int j = (int)(e % (size_t)N), s = r0 + (int)(e / (size_t)N);
    tile[e] = s >= live ? 0u : j == fill ? fill_value : base_rows[e];
  }
}

// 3. stored columns over the tile: column r (node list[r]) rows [r0, r0+rows).
static HD void phase_columns(uint32_t *tile, const uint16_t *list, int n_cols,
                             const uint32_t *cols, size_t first, int S, int r0, int rows, int N,
                             int tid, int nt) {
  size_t n = (size_t)n_cols * rows;
  for (size_t e = tid; e < n; e += nt) {
    size_t r = e / (size_t)rows, s = e % (size_t)rows;
    tile[s * N + list[r]] = cols[(first + r) * (size_t)S + r0 + s];
  }
}

// 4. tile into the world's rows.
static HD void phase_store_tile(uint32_t *out_rows, const uint32_t *tile, size_t n_elems, int tid,
                                int nt) {
  for (size_t e = tid; e < n_elems; e += nt) out_rows[e] = tile[e];
}

static HD inline int tc_tile_rows(int N, int S) {
  int rows = TC_EXPAND_TILE / N;
  return rows < S ? rows : S;
}

__global__ void expand_kernel(uint8_t *dense, const uint8_t *compact, twincache_expand_offsets o) {
  __shared__ uint32_t tile[TC_EXPAND_TILE];
  __shared__ uint16_t list[TC_EXPAND_MAX_NODES];
  const int g = (int)(blockIdx.x / (unsigned)(o.K + 1)), k = (int)(blockIdx.x % (unsigned)(o.K + 1));
  const int tid = (int)threadIdx.x, nt = (int)blockDim.x, N = o.N, S = o.S;
  tc_expand_graph v = tc_graph_views(compact, o, g);
  if (k == o.K) {
    phase_graph_arrays(dense, o, g, v, tid, nt);
    return;
  }
  uint32_t *out = (uint32_t *)(dense + o.inter) + ((size_t)g * o.K + k) * S * N;
  if ((uint32_t)k >= v.n_inter) { // uniform over the block
    phase_zero_world(out, (size_t)S * N, tid, nt);
    return;
  }
  const uint64_t *mask = v.col_mask + (size_t)k * o.W;
  int n_cols = tc_col_count(mask, N, o.W);
  int fill = tc_node_kind_fixes(v.c_kind[k]) ? (int)v.c_target[k] : -1;
  uint32_t fill_value = v.c_value[k];
  size_t first = v.col_first[k];
  const int live = (int)v.c_rows[k + 1]; // rows world k holds (the stored columns are 0 past them)
  phase_col_list(list, mask, N, tid, nt);
  __syncthreads();
  const int R = tc_tile_rows(N, S);
  for (int r0 = 0; r0 < S; r0 += R) {
    int rows = S - r0 < R ? S - r0 : R;
    size_t n = (size_t)rows * N;
    phase_load_tile(tile, v.c_base + (size_t)r0 * N, n, N, fill, fill_value, r0, live, tid, nt);
    __syncthreads();
    phase_columns(tile, list, n_cols, v.cols, first, S, r0, rows, N, tid, nt);
    __syncthreads();
    phase_store_tile(out + (size_t)r0 * N, tile, n, tid, nt);
    __syncthreads(); // the next tile overwrites the shared rows
  }
}

extern "C" int twincache_expand_cuda(void *dense, const void *compact,
                                     const twincache_expand_offsets *o, void *stream) {
  if (o->G <= 0 || o->N <= 0 || o->N > TC_EXPAND_MAX_NODES || o->S <= 0 || o->K < 0)
    return TWINCACHE_KERNELS_EINVAL;
  unsigned blocks = (unsigned)((size_t)o->G * (size_t)(o->K + 1));
  expand_kernel<<<blocks, TC_EXPAND_THREADS, 0, (cudaStream_t)stream>>>(
      (uint8_t *)dense, (const uint8_t *)compact, *o);
  launchReturnIfError();
  return 0;
}

// The kernel's phases on the host: each phase runs for thread 0..threads-1
// in turn, which is one valid schedule of the block between its barriers.
extern "C" void twincache_expand_emulate(void *dense, const void *compact,
                                         const twincache_expand_offsets *o, int threads) {
  static uint32_t tile[TC_EXPAND_TILE];
  static uint16_t list[TC_EXPAND_MAX_NODES];
  const int N = o->N, S = o->S, nt = threads;
  uint8_t *d = (uint8_t *)dense;
  const uint8_t *c = (const uint8_t *)compact;
  for (size_t b = 0; b < (size_t)o->G * (size_t)(o->K + 1); b++) {
    const int g = (int)(b / (size_t)(o->K + 1)), k = (int)(b % (size_t)(o->K + 1));
    tc_expand_graph v = tc_graph_views(c, *o, g);
    if (k == o->K) {
      for (int t = 0; t < nt; t++) phase_graph_arrays(d, *o, g, v, t, nt);
      continue;
    }
    uint32_t *out = (uint32_t *)(d + o->inter) + ((size_t)g * o->K + k) * S * N;
    if ((uint32_t)k >= v.n_inter) {
      for (int t = 0; t < nt; t++) phase_zero_world(out, (size_t)S * N, t, nt);
      continue;
    }
    const uint64_t *mask = v.col_mask + (size_t)k * o->W;
    int n_cols = tc_col_count(mask, N, o->W);
    int fill = tc_node_kind_fixes(v.c_kind[k]) ? (int)v.c_target[k] : -1;
    uint32_t fill_value = v.c_value[k];
    size_t first = v.col_first[k];
    const int live = (int)v.c_rows[k + 1];
    memset(list, 0xff, sizeof list); // shared memory starts undefined
    for (int t = 0; t < nt; t++) phase_col_list(list, mask, N, t, nt);
    const int R = tc_tile_rows(N, S);
    for (int r0 = 0; r0 < S; r0 += R) {
      int rows = S - r0 < R ? S - r0 : R;
      size_t n = (size_t)rows * N;
      for (int t = 0; t < nt; t++)
        phase_load_tile(tile, v.c_base + (size_t)r0 * N, n, N, fill, fill_value, r0, live, t, nt);
      for (int t = 0; t < nt; t++)
        phase_columns(tile, list, n_cols, v.cols, first, S, r0, rows, N, t, nt);
      for (int t = 0; t < nt; t++) phase_store_tile(out + (size_t)r0 * N, tile, n, t, nt);
    }
  }
}
