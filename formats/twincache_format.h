/* twincache_format.h — the record codec of a twincache cache.
 *
 * One graph (its DAG, SCM parameters, interventions and samples of the base
 * world and of every twin world) is encoded into one self-checking *graph
 * frame*; C consecutive frames make one *chunk record* (the LMDB value).
 * formats/FORMAT.md documents every byte. This library knows nothing of LMDB.
 *
 * Conventions (as in LMDB and zstd):
 *  - Functions return int: 0 (TWINCACHE_OK) on success, a negative
 *    TWINCACHE_E* code on error; twincache_strerror() names every code.
 *  - Contexts are opaque, created and freed in pairs; free accepts NULL.
 *  - A context is used by one thread at a time; distinct contexts are
 *    independent, so give each thread its own.
 *  - Decoding untrusted bytes never reads or writes out of bounds: every size
 *    is checked against the header and the caller's capacities first.
 */
#ifndef TWINCACHE_FORMAT_H
#define TWINCACHE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TWINCACHE_VERSION_STRING "0.1.0"
/* Version of the frame, chunk and meta layouts. A reader refuses a newer
 * major layout with TWINCACHE_EVERSION (see FORMAT.md, "Versions").
 * Writers write the oldest version that holds what they write: a cache of
 * twin worlds stays version 4 (its bytes unchanged since), one of
 * independent worlds (TWINCACHE_GRAPH_INDEPENDENT) is version 5. */
#define TWINCACHE_FORMAT_VERSION 5
#define TWINCACHE_FORMAT_VERSION_TWIN 4

/* Hard limits of the format (also what the decoder accepts). */
#define TWINCACHE_MAX_NODES 256     /* N */
#define TWINCACHE_MAX_SAMPLES 65535 /* S (0: an SCM-only frame or cache, no samples) */
#define TWINCACHE_MAX_INTER 256     /* K per graph */
#define TWINCACHE_MAX_TARGETS 16    /* targets of one intervention (world), version 4 */
#define TWINCACHE_MAX_HIDDEN 64     /* H of the MLP mechanism */
#define TWINCACHE_MAX_CHUNK_GRAPHS 65536

/* ---- status codes (shared by every twincache library) ------------------- */
enum {
  TWINCACHE_OK = 0,
  TWINCACHE_END = 1,           /* not an error: a stream has no more items */
  TWINCACHE_ENOMEM = -1,       /* an allocation failed */
  TWINCACHE_EINVAL = -2,       /* an argument or option is out of range */
  TWINCACHE_ECORRUPT = -3,     /* bytes are not a valid frame/chunk/meta */
  TWINCACHE_ECHECKSUM = -4,    /* structure valid but a checksum differs */
  TWINCACHE_EVERSION = -5,     /* written by a newer, incompatible format */
  TWINCACHE_ETOOBIG = -6,      /* decoded sizes exceed the caller's capacity */
  TWINCACHE_EZSTD = -7,        /* zstd reported an error */
  TWINCACHE_ELMDB = -8,        /* LMDB reported an error */
  TWINCACHE_EIO = -9,          /* a file-system error (see errno) */
  TWINCACHE_ENOTFOUND = -10,   /* no such cache, graph or key */
  TWINCACHE_EMISMATCH = -11,   /* the cache was built with another config */
  TWINCACHE_ENOTCACHE = -12,   /* the directory is not a twincache cache */
  TWINCACHE_ETHREAD = -13,     /* a thread could not be created */
  TWINCACHE_ECLOSED = -14,     /* the object is closing or failed earlier */
  TWINCACHE_EFULL = -15,       /* the disk or the LMDB map is full */
  TWINCACHE_EBUSY = -16,       /* another process is writing the cache */
  TWINCACHE_EAGAIN = -17,      /* nothing ready within the timeout; try again */
  TWINCACHE_EDEADLK = -18,     /* next() would wait forever: the batch slot it
                                  needs is held and cannot be released */
  TWINCACHE_ESTALE = -19,      /* a batch handle that is no longer current */
  /* -20 and up: storage (cache/) */
  TWINCACHE_ETRUNCATED = -20,  /* data file shorter than the database says: truncated or damaged copy */
  /* -21 and up: devices (kernels/, train/) */
  TWINCACHE_EDEVICE = -21,     /* a CUDA call or kernel launch failed (the message names it) */
};

/* Returns a static, human-readable string for any twincache status code
 * (never NULL; unknown codes give "unknown twincache error"). Thread-safe. */
const char *twincache_strerror(int code);

/* Returns this thread's message about the last failure of a twincache
 * library call: one line naming the file, record or option concerned, or ""
 * when none was left. Never NULL. Valid until this thread's next twincache
 * call. Thread-safe (the message is thread-local). */
const char *twincache_last_error(void);

/* ---- the decoded graph --------------------------------------------------- */
/* Mechanisms (FORMAT.md 3.6): RFF, SIGMOID, POLY and MIXED from format version 4. Every mechanism but
 * LINEAR stores H hidden units per node in the same block layout (W1, b1,
 * w2) and differs in the function of a unit. */
enum twincache_mechanism {
  TWINCACHE_MECH_LINEAR = 0, /* x_j = sum_i w_ij x_i + e_j */
  TWINCACHE_MECH_MLP = 1,    /* x_j = sum_h w2[h] tanh(W1[h].x + b1[h]) + e_j */
  TWINCACHE_MECH_RFF = 2,    /* x_j = sum_h w2[h] cos(W1[h].x + b1[h]) + e_j: random Fourier
                              * features, a draw from a GP prior with an RBF kernel */
  TWINCACHE_MECH_SIGMOID = 3, /* x_j = sum_h w2[h] sigmoid(W1[h].x + b1[h]) + e_j, one unit per
                               * parent (additive, CDT's sigmoid_add) */
  TWINCACHE_MECH_POLY = 4,    /* x_j = sum_h w2[h] clamp(W1[h].x + b1[h], -4, 4)^2 + e_j, one unit
                               * per parent (additive quadratic) */
  TWINCACHE_MECH_MIXED = 5,   /* each node its own mechanism (< MIXED), recorded per node */
  TWINCACHE_MECH_COUNT = 6
};
/* Noise families (FORMAT.md 3.6): CAUCHY and GUMBEL from format version 4. */
enum twincache_noise {
  TWINCACHE_NOISE_GAUSS = 0,
  TWINCACHE_NOISE_LAPLACE = 1,
  TWINCACHE_NOISE_UNIFORM = 2,
  TWINCACHE_NOISE_CAUCHY = 3, /* standard Cauchy: location 0, scale 1 (no mean, no variance) */
  TWINCACHE_NOISE_GUMBEL = 4, /* standard Gumbel (maxima): location 0, scale 1 */
  TWINCACHE_NOISE_COUNT = 5
};
enum twincache_inter_kind {
  TWINCACHE_DO = 0,          /* x_t = value */
  TWINCACHE_SHIFT = 1,       /* x_t = f_t(pa) + noise_scale[t] e_t + value */
  TWINCACHE_INTER_NOISE = 2, /* x_t = f_t(pa) + value (noise_scale[t] e_t): noise scale times value (v4) */
  TWINCACHE_INTER_SOFT = 3,  /* x_t = f'_t(pa) + noise_scale[t] e_t: the mechanism replaced by the
                              * world's stored parameters (graph.soft); value 0 (v4) */
  TWINCACHE_INTER_KIND_COUNT = 4
};
/* Floats of one soft intervention's parameter block (graph.soft row, FORMAT.md
 * 3.2 section 7a): n for a LINEAR graph (the new weight of edge i -> t at i),
 * else H*n + 2H: a node block W1 (H,n), b1 (H), w2 (H), as in mlp (MLP, RFF,
 * SIGMOID, POLY); in a MIXED graph a linear target's new weights take the
 * block's first n floats (weight of edge i -> t at i), the rest +0.0. */
static inline uint32_t twincache_soft_stride(uint32_t n_nodes, uint32_t n_hidden, int mechanism) {
  return mechanism != 0 /* TWINCACHE_MECH_LINEAR */ ? n_hidden * n_nodes + 2 * n_hidden : n_nodes;
}
/* The random-graph family a graph was drawn from (frame header byte 27 from
 * format version 4; FORMAT.md section 3.7 defines each). UNKNOWN: a frame of
 * versions 1-3, which did not record it. */
enum twincache_family {
  TWINCACHE_FAMILY_ER = 0,   /* Erdos-Renyi G(n, p), oriented along a random order */
  TWINCACHE_FAMILY_BA = 1,   /* Barabasi-Albert, oriented along a random order */
  TWINCACHE_FAMILY_WS = 2,   /* Watts-Strogatz, oriented along a random order */
  TWINCACHE_FAMILY_SF = 3,   /* scale-free: BA with every edge new -> old (power-law in-degree) */
  TWINCACHE_FAMILY_SBM = 4,  /* stochastic block model, oriented along a random order */
  TWINCACHE_FAMILY_RGG = 5,  /* random geometric graph in the unit square */
  TWINCACHE_FAMILY_FILE = 6, /* one fixed DAG read from an edge-list file */
  TWINCACHE_FAMILY_COUNT = 7,
  TWINCACHE_FAMILY_UNKNOWN = 255
};

/* ---- names of the choices (one table, used by the generator, the tools and
 * the Python package alike) ---------------------------------------------- */
enum twincache_choice {
  TWINCACHE_CHOICE_FAMILY = 0,    /* enum twincache_family: er ba ws sf sbm rgg file */
  TWINCACHE_CHOICE_MECHANISM = 1, /* enum twincache_mechanism: linear mlp rff sigmoid poly mixed */
  TWINCACHE_CHOICE_NOISE = 2,     /* enum twincache_noise: gauss laplace uniform cauchy gumbel */
  TWINCACHE_CHOICE_INTER_KIND = 3 /* enum twincache_inter_kind: do shift noise soft */
};
/* Number of codes of a choice (codes are 0..count-1); 0 for an unknown choice. */
int twincache_choice_count(int choice);
/* The name of a code ("mlp"), static; NULL when the choice or code is unknown. */
const char *twincache_choice_name(int choice, int code);
/* The NULL-terminated array of a choice's names, indexed by code (static);
 * NULL for an unknown choice. */
const char *const *twincache_choice_names(int choice);
/* The code of name[0..len) (len = (size_t)-1: NUL-terminated). Returns the
 * code (>= 0), or TWINCACHE_EINVAL with twincache_last_error() naming the
 * unknown name. Thread-safe. */
int twincache_choice_code(int choice, const char *name, size_t len);

/* Graph flags. */
#define TWINCACHE_GRAPH_STANDARDIZED 0x1u /* samples standardised per node (norm_* valid) */
#define TWINCACHE_GRAPH_HETERO 0x2u /* version 4: heteroscedastic noise (hetero_* valid), FORMAT.md 3.6 */
#define TWINCACHE_GRAPH_ISCM 0x4u   /* version 4, with STANDARDIZED: an internally standardised SCM */
/* version 5: independent worlds: world k draws its own noise (the same SCM
 * and intervention), so every node's column of every world is stored and
 * nothing is shared with the base world (FORMAT.md 3.9). A frame with it is
 * written as version 5, every other frame as TWINCACHE_FORMAT_VERSION_TWIN. */
#define TWINCACHE_GRAPH_INDEPENDENT 0x8u
/* version 5: rows per world: world w (0 = base, k+1 = intervention k)
 * holds world_rows[w] rows, 1..S, not all S (section 7b, FORMAT.md 3.10);
 * rows past a world's count are not stored and decode to +0.0. A twin
 * world's row s is the twin of base row s, so twin worlds hold at most the
 * base world's rows. The encoder sets the header's bit itself from
 * world_rows; the graph's own bit asks for a version-5 frame even when
 * every count is S (so a cache made with counts has one version). A frame
 * with it is version 5. */
#define TWINCACHE_GRAPH_ROWS 0x10u
/* version 5: observed data, no SCM (FORMAT.md 3.11): an imported dataset
 * (a DCDI folder, a CSV with a regime column, numpy arrays). Set with
 * INDEPENDENT (each regime its own rows, every column stored); mechanism
 * LINEAR, H 0, noise GAUSS, family UNKNOWN, no STANDARDIZED/HETERO/ISCM;
 * the weights and noise scales are +0.0 (no SCM to give them) and every
 * world's kind is TWINCACHE_INTER_OBSERVED with value +0.0. Fresh mode
 * refuses such a cache: there is no SCM to sample. */
#define TWINCACHE_GRAPH_OBSERVED 0x20u
/* version 5, only with OBSERVED: the graph is not known; adj is all zero
 * and means "unknown", not "no edge". */
#define TWINCACHE_GRAPH_NO_DAG 0x40u
/* version 5, only with OBSERVED: the regimes' targets are withheld; every
 * world stores one target, node 0, which means nothing. */
#define TWINCACHE_GRAPH_NO_TARGETS 0x80u
/* The kind of every world of an OBSERVED frame: a regime whose targets are
 * known (or withheld) but not what was done to them. Past
 * TWINCACHE_INTER_KIND_COUNT: no generator makes it, and
 * twincache_inter_kind_fixes_target says 0 (its columns are all stored). */
#define TWINCACHE_INTER_OBSERVED 4
/* 1 when `kind` is a world kind a graph of these flags may hold: OBSERVED
 * (and only it) in an OBSERVED graph, a generator's kind (< COUNT) in every
 * other; else 0. What the decoders accept; for readers that check again. */
static inline int twincache_inter_kind_valid(unsigned graph_flags, unsigned kind) {
  return (graph_flags & TWINCACHE_GRAPH_OBSERVED) ? kind == TWINCACHE_INTER_OBSERVED
                                                  : kind < TWINCACHE_INTER_KIND_COUNT;
}
/* The format version a frame (or cache) of these graph flags is written as. */
#define TWINCACHE_FORMAT_VERSION_OF(flags)                                                                   \
  (((flags) & (TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_ROWS | TWINCACHE_GRAPH_OBSERVED))               \
       ? TWINCACHE_FORMAT_VERSION                                                                            \
       : TWINCACHE_FORMAT_VERSION_TWIN)

/* One graph and its worlds. The SCM (node j, parents pa(j)):
 *   linear: x_j = sum_{i in pa(j)} weight[i*ld_adj + j] * x_i + noise_scale[j] * e_j
 *   MLP:    x_j = sum_h w2[h] * tanh(sum_i W1[h][i] * x_i + b1[h]) + noise_scale[j] * e_j
 *           with node j's block at mlp + j*mlp_stride: W1 (H,N) then b1 (H) then w2 (H),
 *           mlp_stride = H*N + 2*H (W1 columns of non-parents are 0).
 * Intervention k on node target[k]: DO sets x_t = value[k]; SHIFT adds value[k]
 * to x_t's mechanism; NOISE (format version 4) multiplies x_t's noise term by
 * value[k], x_t = f_t(pa) + value[k] * (noise_scale[t] * e_t), the same e_t;
 * SOFT (version 4) evaluates x_t's mechanism with the parameters of row k of
 * soft instead of its own (W1 columns / weights of non-parents +0.0), the same e_t. Twin world k reuses exactly the exogenous noise e of the
 * base world, sample by sample (with TWINCACHE_GRAPH_INDEPENDENT, format 5,
 * world k has its own noise instead and every one of its columns is stored). When STANDARDIZED, every world is mapped by
 * (x - norm_mean[j]) / norm_std[j] (mean and population std of the raw base
 * world), and a DO value is stored in that same space; a SHIFT value stays
 * in raw units. FORMAT.md section 3.6 says what e_j is per noise family.
 *
 * Sample arrays are row-major with a leading dimension ld (>= n_nodes) so a
 * decoder can write straight into a padded batch:
 *   base  (S, ld):      base[s*ld + j]
 *   inter (K, S, ld):   inter[(k*S + s)*ld + j]   (row s is the twin of base row s)
 *   adj   (N, ld_adj):  adj[i*ld_adj + j] = 1  <=>  edge i -> j
 *   weight(N, ld_adj):  linear edge weight, 0 where there is no edge
 * When ld > n_nodes the decoder writes 0 to columns [n_nodes, ld) of every row
 * it writes. Rows beyond n_samples / interventions beyond n_inter are not
 * touched. */
typedef struct twincache_graph {
  /* --- capacities, set by the caller before decoding ------------------- */
  uint32_t cap_nodes, cap_samples, cap_inter, cap_hidden;
  uint32_t ld;     /* leading dimension of base/inter rows, >= n_nodes */
  uint32_t ld_adj; /* leading dimension of adj/weight rows, >= n_nodes */
  /* --- dimensions and scalars (filled by decode, read by encode) ------- */
  uint64_t index;     /* graph index i in the cache */
  uint32_t n_nodes;   /* N */
  uint32_t n_samples; /* S */
  uint32_t n_inter;   /* K */
  uint32_t n_hidden;  /* H (0 for linear) */
  uint8_t mechanism;  /* enum twincache_mechanism */
  uint8_t noise;      /* enum twincache_noise */
  uint8_t flags;      /* TWINCACHE_GRAPH_* */
  uint8_t family;     /* enum twincache_family: < TWINCACHE_FAMILY_COUNT or UNKNOWN
                         (what twincache_graph_alloc sets and frames before
                         version 4 decode to) */
  /* --- arrays (caller-owned; any may be NULL on decode to skip it, except
   *     that encode needs all the ones its flags and mechanism use) ---- */
  uint8_t *adj;         /* (N, ld_adj) */
  float *weight;        /* (N, ld_adj) */
  float *mlp;           /* (N, H*N + 2H) when mechanism != LINEAR (MLP, RFF) */
  float *noise_scale;   /* (N) */
  float *norm_mean;     /* (N) when STANDARDIZED */
  float *norm_std;      /* (N) when STANDARDIZED */
  uint16_t *target;     /* (K) intervened node */
  uint8_t *kind;        /* (K) enum twincache_inter_kind */
  float *value;         /* (K) do value or shift */
  float *base;          /* (S, ld) */
  float *inter;         /* (K, S, ld) */
  uint8_t *node_mech;   /* (N) when mechanism == MIXED: node j's mechanism, < MIXED (a
                         * linear node's weights are in `weight`, another's in its block) */
  float *hetero_w;      /* (N, ld_adj) when HETERO: v_ij of the noise scale, 0 off the edges */
  float *hetero_c;      /* (N) when HETERO: c_j */
  /* (K, P) P = twincache_soft_stride(N, H, mechanism): row k holds the new
   * parameters of world k when kind[k] is SOFT (other rows are not read by
   * encode and are left untouched by decode); NULL on decode: skipped */
  float *soft;
  /* Multi-target interventions (version 4): world k intervenes on
   * n_targets[k] distinct nodes at once, all of kind[k]: target[k] with
   * value[k], then more_target[k*(TWINCACHE_MAX_TARGETS-1) + i] with
   * more_value[same] for i < n_targets[k] - 1. Its changed set is the union
   * of the targets' descendant sets. A SOFT world has one target. NULL
   * n_targets: every world has one target (encode), not written (decode). */
  uint8_t *n_targets;   /* (K) 1..TWINCACHE_MAX_TARGETS */
  uint16_t *more_target; /* (K, TWINCACHE_MAX_TARGETS-1) */
  float *more_value;     /* (K, TWINCACHE_MAX_TARGETS-1) */
  /* Rows per world (version 5, added at the end of the struct): (K+1),
   * entry 0 the base world's, entry k+1 world k's, each 1..S; twin worlds
   * at most entry 0. Encode: an entry 0 means S; NULL, or every entry S,
   * stores no section 7b (the frame is as before); otherwise the frame
   * holds only each world's first world_rows[w] rows. Decode: every entry
   * written (S when the frame has no section 7b), rows past a world's count
   * set to +0.0; NULL skips. twincache_graph_alloc allocates it zeroed. */
  uint32_t *world_rows;
} twincache_graph;

/* Allocates a graph whose arrays hold up to the given sizes, with
 * ld = ld_adj = max_nodes; capacities are set. Returns NULL when out of memory
 * or a size is 0 or beyond the format's limits (max_hidden may be 0, and
 * max_samples 0 for the SCM only: no samples).
 * Free with twincache_graph_free (accepts NULL). */
twincache_graph *twincache_graph_alloc(uint32_t max_nodes, uint32_t max_samples,
                                       uint32_t max_inter, uint32_t max_hidden);
void twincache_graph_free(twincache_graph *g);

/* Floats of one row of g->soft for g's own sizes and mechanism:
 * twincache_soft_stride(g->n_nodes, g->n_hidden, g->mechanism), callable
 * from bindings that cannot use the inline (Python). 0 for NULL. */
uint32_t twincache_graph_soft_stride(const twincache_graph *g);

/* 1 when a twin world of this kind (enum twincache_inter_kind) sets its
 * target to the world's value outright, as do() does, so the value is the
 * target's whole column; 0 for the others (shift, noise, soft) and for codes
 * beyond the kinds. The rule itself is common/tc_node_body.h's
 * tc_node_kind_fixes; this is it for bindings (Python). */
int twincache_inter_kind_fixes_target(int kind);

/* Bytes of the base plus intervened samples as raw float32 (S*N*(1+K)*4):
 * the yardstick of compression ratios. */
uint64_t twincache_graph_raw_bytes(const twincache_graph *g);

/* ---- graph frames --------------------------------------------------------- */
typedef struct twincache_cctx twincache_cctx; /* encoder context */
typedef struct twincache_dctx twincache_dctx; /* decoder context */

/* Frame encodings: how the payload is zstd-compressed. Both are lossless and
 * every reader decodes both (and every version-1 frame); the encoding is not
 * needed to decode, so one cache may mix them.
 *  FAST  (the default): zstd at a negative level, literals stored raw (no
 *        Huffman stage). On the default workload 7% larger than SMALL at
 *        level 1; its zstd stage decodes ~13x faster, a whole frame ~7x
 *        faster, and it encodes faster. BENCHMARKS.md, "Frame encodings".
 *  SMALL: zstd at the context's level with Huffman-coded literals: the
 *        version-1 frames (what twincache_cctx_create gave before v2). */
enum twincache_encoding { TWINCACHE_ENCODING_FAST = 0, TWINCACHE_ENCODING_SMALL = 1 };

/* Creates an encoder context with the FAST encoding. level: the zstd level
 * (1..19, clamped) of the SMALL encoding, used once twincache_cctx_set_encoding
 * selects it. Returns NULL when out of memory. */
twincache_cctx *twincache_cctx_create(int level);
/* Selects the encoding of later frames (enum twincache_encoding). Returns 0,
 * TWINCACHE_EINVAL for a NULL context or an unknown encoding (the context is
 * then unchanged), or TWINCACHE_EZSTD if zstd refuses the setting. */
int twincache_cctx_set_encoding(twincache_cctx *c, int encoding);
void twincache_cctx_free(twincache_cctx *c);
twincache_dctx *twincache_dctx_create(void);
void twincache_dctx_free(twincache_dctx *d);

/* Upper bound of the encoded frame size of a graph of these dimensions. */
size_t twincache_frame_bound(uint32_t n_nodes, uint32_t n_samples, uint32_t n_inter,
                             uint32_t n_hidden);

/* Encodes g into dst[0..cap). n_samples may be 0: an SCM-only frame, which
 * stores the graph, its SCM and interventions and no world (base and inter
 * are then not read). Uses the sparse twin encoding: per intervention
 * only the columns of the target and its descendants (derived from adj) are
 * stored; a DO target column is stored once as its value. Fails with
 * TWINCACHE_EINVAL if the graph is not a DAG, a target is out of range, or a
 * column that the structure says is unchanged differs from base (the twin
 * property), so a lossy record can never be written. With
 * TWINCACHE_GRAPH_INDEPENDENT every column of every world is stored (no twin
 * check, a DO column must still be its value) and the frame is version 5;
 * every other frame is version 4 (TWINCACHE_FORMAT_VERSION_OF).
 * On success returns 0 and sets *written; on error dst is unspecified. */
int twincache_frame_encode(twincache_cctx *c, const twincache_graph *g, void *dst, size_t cap,
                           size_t *written);

/* Stores the sample floats of later frames as 4 byte planes (on != 0) or
 * plain (0, the default). Decoders read both. Returns 0 or TWINCACHE_EINVAL. */
int twincache_cctx_set_shuffle(twincache_cctx *c, int on);

/* Reads the dimensions of a frame without decompressing (header checks only).
 * Any pointer may be NULL. */
int twincache_frame_peek(const void *src, size_t size, uint64_t *index, uint32_t *n_nodes,
                         uint32_t *n_samples, uint32_t *n_inter, uint32_t *n_hidden);

/* Decodes one frame into g's caller-owned arrays (see the layout above):
 * either encoding, format versions 1..TWINCACHE_FORMAT_VERSION. Validates
 * magic, version, header checksum, dimensions against g's capacities
 * (TWINCACHE_ETOOBIG), every internal size, and the payload checksum (the
 * header's XXH3 from version 3, zstd's content checksum in versions 1-2: a
 * frame without the one its version requires is TWINCACHE_ECORRUPT). No allocation after the context's first use
 * at the largest size. On error g's arrays may be partly written. */
int twincache_frame_decode(twincache_dctx *d, const void *src, size_t size, twincache_graph *g);

/* A decoded frame's sections, read-only, as the payload stores them
 * (FORMAT.md, "Graph frame"), for a reader that builds its own layout
 * without the dense twin worlds of twincache_graph (the loader's compact
 * batch). Set bits are in the packed little-endian order of the format:
 * bit j of a set of R = (N+7)/8 bytes is bit j%8 of byte j/8, and bits past
 * node N-1 are 0. Float sections are little-endian float32 at any byte
 * alignment: read them with memcpy, never through a float pointer. */
typedef struct twincache_frame_view {
  uint64_t index;
  uint32_t n_nodes, n_samples, n_inter, n_hidden; /* N, S, K, H */
  uint8_t mechanism, noise, flags;
  uint8_t family;              /* enum twincache_family; UNKNOWN before version 4 */
  uint32_t set_bytes;          /* R = (N+7)/8: bytes of one node set */
  uint32_t n_edges;            /* E */
  uint64_t n_cols;             /* C: stored twin columns, all interventions */
  const uint8_t *adj;          /* (N, R) children of node i: row i */
  const uint8_t *weight;       /* (E) f32: linear weight of each edge, edges row-major */
  const uint8_t *mlp;          /* (N, H*N + 2H) f32 when not LINEAR, else NULL */
  const uint8_t *noise_scale;  /* (N) f32 */
  const uint8_t *norm_mean;    /* (N) f32 when STANDARDIZED, else NULL */
  const uint8_t *norm_std;     /* (N) f32 when STANDARDIZED, else NULL */
  /* interventions, decoded (aligned, native order) */
  const uint16_t *target;      /* (K) */
  const uint8_t *kind;         /* (K) enum twincache_inter_kind */
  const float *value;          /* (K) */
  const uint32_t *n_cols_of;   /* (K) stored columns of intervention k; they sum to C */
  const uint8_t *desc;         /* (K, R) world k's targets and their descendants; every node
                                * in an INDEPENDENT frame (its columns are all stored) */
  /* multi-target worlds, decoded as in twincache_graph: n_targets (K),
   * more_target and more_value (K, TWINCACHE_MAX_TARGETS-1) */
  const uint8_t *n_targets;
  const uint16_t *more_target;
  const float *more_value;
  /* (number of SOFT worlds, P) f32: the SOFT worlds' parameter blocks in
   * world order (P = twincache_soft_stride), or NULL when there is none */
  const uint8_t *soft;
  const uint8_t *base;         /* (N, S) f32: the base world column-major, column j = node j */
  /* (C, S) f32: per intervention k in order, the column of every node of
   * desc[k] in increasing node order, except a DO target's (whose column is
   * value[k] in every row): twin world k equals base but for these columns */
  const uint8_t *cols;
  const uint8_t *node_mech;    /* (N) u8 when MIXED: each node's mechanism, else NULL */
  const uint8_t *hetero_w;     /* (E) f32 when HETERO: v of each edge, edges row-major, else NULL */
  const uint8_t *hetero_c;     /* (N) f32 when HETERO, else NULL */
  /* (K+1) rows per world (version 5, at the end of the struct): entry 0
   * the base world's, k+1 world k's; all S when the frame has no section
   * 7b. With section 7b, base's column j holds world_rows[0] f32 and a
   * stored column of world k world_rows[k+1] (not S). */
  const uint32_t *world_rows;
} twincache_frame_view;

/* Decodes one frame into *v without building any world: the same
 * validation as twincache_frame_decode (header, sizes, zstd content
 * checksum, the DAG, intervention records and descendant sets), no
 * capacities (call twincache_frame_peek first to refuse sizes before
 * decompressing). Both codecs: byte-plane shuffled samples are joined into
 * the context's scratch. v's pointers point into d and stay valid until the
 * next decode call on d or its free; v is unspecified on error. Returns 0,
 * TWINCACHE_EINVAL (a NULL argument), TWINCACHE_ECORRUPT,
 * TWINCACHE_ECHECKSUM, TWINCACHE_EVERSION or TWINCACHE_ENOMEM. */
int twincache_frame_decode_view(twincache_dctx *d, const void *src, size_t size,
                                twincache_frame_view *v);

/* Writes the base world of a view as S rows of ld floats, dst (S, ld):
 * dst[s*ld + j] = base sample s of node j, 0 for j in [N, ld). ld >= N. */
void twincache_frame_view_base_rows(const twincache_frame_view *v, float *dst, uint32_t ld);

/* ---- chunk records -------------------------------------------------------- */
/* A chunk is: a header, an offset table of count+1 uint32, then count frames.
 * The builder appends encoded frames to a growing buffer it owns. */
typedef struct twincache_chunk_builder twincache_chunk_builder;

twincache_chunk_builder *twincache_chunk_builder_create(void);
void twincache_chunk_builder_free(twincache_chunk_builder *b);
/* Starts an empty chunk whose first graph has index first_index. */
void twincache_chunk_builder_reset(twincache_chunk_builder *b, uint64_t first_index);
/* Sets the cache tag (see twincache_meta) finished chunks carry; kept across
 * resets; 0 until set. */
void twincache_chunk_builder_set_tag(twincache_chunk_builder *b, uint64_t tag);
/* Encodes g (whose index must be first_index + count) and appends it. */
int twincache_chunk_builder_add(twincache_chunk_builder *b, twincache_cctx *c,
                                const twincache_graph *g);
/* Appends an already encoded frame of this format version (another
 * version is TWINCACHE_EINVAL: a record never mixes layouts). */
int twincache_chunk_builder_add_frame(twincache_chunk_builder *b, const void *frame, size_t size);
/* Writes the header and offset table; *data and *size stay valid until the next
 * reset/add/free of the builder. */
int twincache_chunk_builder_finish(twincache_chunk_builder *b, const void **data, size_t *size);
uint32_t twincache_chunk_builder_count(const twincache_chunk_builder *b);

/* A parsed view of a chunk record; points into the caller's bytes and is
 * valid as long as they are (for LMDB: until the read transaction ends). */
typedef struct twincache_chunk_view {
  uint32_t version;     /* format version of the record (1..TWINCACHE_FORMAT_VERSION) */
  uint64_t tag;         /* v2: the cache tag of the cache that wrote it; v1: 0 */
  uint64_t first_index; /* index of slot 0 */
  uint32_t count;       /* graphs in the chunk */
  const uint8_t *frames;   /* start of the frame area */
  const uint32_t *offsets; /* (count+1) little-endian offsets into frames (unaligned-safe access: use twincache_chunk_frame) */
  size_t frames_bytes;
} twincache_chunk_view;

/* Validates the chunk header, the whole offset table (monotonic, in bounds)
 * and, for v2, the tag trailer. Returns 0 and fills *v, or
 * TWINCACHE_ECORRUPT/ECHECKSUM/EVERSION. Whether v->tag is the tag of the
 * cache it is read from is the cache's check (cache/). */
int twincache_chunk_parse(const void *src, size_t size, twincache_chunk_view *v);
/* Returns frame `slot` of a parsed chunk (slot < count) as pointer and size.
 * TWINCACHE_ECORRUPT when the frame's magic or format version is not the
 * record's (a record never mixes layouts); TWINCACHE_EINVAL for a bad slot. */
int twincache_chunk_frame(const twincache_chunk_view *v, uint32_t slot, const void **frame,
                          size_t *size);

/* ---- meta entries ---------------------------------------------------------- */
/* Keys of the "meta" sub-database (NUL-free ASCII keys, stored without NUL). */
#define TWINCACHE_META_VERSION "format_version" /* uint32 LE */
#define TWINCACHE_META_CONFIG "config"          /* generator config, JSON text */
#define TWINCACHE_META_DIMS "dims"              /* twincache_dims, encoded below */
#define TWINCACHE_META_COMMITTED "committed"    /* uint64 LE: graphs committed */
#define TWINCACHE_META_STATS "stats"            /* twincache_stats, encoded below */
#define TWINCACHE_META_LIBRARY "library"        /* text: twincache version that wrote it */
#define TWINCACHE_META_TAG "cache_tag"          /* v2: uint64 LE, the cache tag */
#define TWINCACHE_META_CHECK "meta_check"       /* v2: TWINCACHE_META_CHECK_BYTES, below */

/* Fixed facts of a cache, needed to size batches without reading graphs. */
typedef struct twincache_dims {
  uint64_t graphs;      /* graphs the generator was asked for */
  uint32_t chunk_graphs; /* C: graphs per chunk record */
  uint32_t max_nodes;   /* N of the batch: largest node count possible */
  uint32_t max_inter;   /* K of the batch: largest intervention count */
  uint32_t samples;     /* S: samples per world, the same for every graph; 0 in an
                         * SCM-only cache (frames hold the SCMs, no samples) */
  uint32_t hidden;      /* H of the MLP mechanism, 0 for linear */
} twincache_dims;
#define TWINCACHE_DIMS_BYTES 32

/* Running totals, committed with the graphs they count. */
typedef struct twincache_stats {
  uint64_t raw_bytes;   /* sum of twincache_graph_raw_bytes */
  uint64_t frame_bytes; /* sum of encoded frame sizes */
  uint64_t edges;       /* sum of edge counts */
  uint64_t nodes;       /* sum of node counts */
} twincache_stats;
#define TWINCACHE_STATS_BYTES 40

/* Encode into exactly *_BYTES bytes (magic-free, version in a field);
 * decode checks the size and the embedded version. */
void twincache_dims_encode(const twincache_dims *d, uint8_t out[TWINCACHE_DIMS_BYTES]);
int twincache_dims_decode(const void *src, size_t size, twincache_dims *d);
void twincache_stats_encode(const twincache_stats *s, uint8_t out[TWINCACHE_STATS_BYTES]);
int twincache_stats_decode(const void *src, size_t size, twincache_stats *s);

/* ---- the meta record ------------------------------------------------------
 * The meta entries of a cache as one record. Version 2 binds them together
 * with a checksum (the "meta_check" entry: u32 layout version 1, u32 0,
 * u64 FNV-1a 64 of the canonical serialisation, FORMAT.md section 4) and
 * names the cache by its tag: FNV-1a 64 of the config JSON bytes, also
 * carried by every v2 chunk record. Pure functions over bytes. */
#define TWINCACHE_META_CHECK_BYTES 16

enum twincache_meta_key {
  TWINCACHE_MK_VERSION = 0, TWINCACHE_MK_CONFIG, TWINCACHE_MK_DIMS, TWINCACHE_MK_COMMITTED,
  TWINCACHE_MK_STATS, TWINCACHE_MK_LIBRARY, TWINCACHE_MK_TAG, TWINCACHE_MK_CHECK,
  TWINCACHE_MK_COUNT
};
/* The LMDB key text of meta key k (TWINCACHE_META_*), NULL when out of range. */
const char *twincache_meta_key_name(int k);

/* One raw meta value as stored; data == NULL means the entry is absent. */
typedef struct twincache_meta_entry {
  const void *data;
  size_t size;
} twincache_meta_entry;

/* The decoded meta record. config/library point into the caller's entry
 * bytes (not NUL-terminated; "" with length 0 when absent). */
typedef struct twincache_meta {
  uint32_t version;       /* format version of the cache, 1..TWINCACHE_FORMAT_VERSION */
  twincache_dims dims;
  uint64_t committed;     /* 0 when absent (nothing committed yet) */
  twincache_stats stats;  /* zero when absent */
  uint64_t tag;           /* stored (v2) or computed from config (v1) */
  const char *config;
  size_t config_len;
  const char *library;
  size_t library_len;
} twincache_meta;

/* The cache tag of a config text: FNV-1a 64 of its bytes. */
uint64_t twincache_meta_tag(const char *config, size_t config_len);
/* FNV-1a 64 of m's canonical serialisation (version, dims, committed, stats,
 * tag, config, library; FORMAT.md section 4). */
uint64_t twincache_meta_checksum(const twincache_meta *m);
/* The "meta_check" value of m. */
void twincache_meta_check_encode(const twincache_meta *m, uint8_t out[TWINCACHE_META_CHECK_BYTES]);
/* Decodes and validates the entries e[TWINCACHE_MK_COUNT] into *m: sizes,
 * versions, dims within the format's limits, and for v2 the tag (present,
 * equal to the config's) and the checksum. Returns 0, TWINCACHE_ENOTCACHE
 * (no format_version), TWINCACHE_EVERSION (newer), TWINCACHE_ECORRUPT
 * (anything else: the meta record is damaged or was altered),
 * TWINCACHE_EINVAL (NULL). Never reads outside the entries. */
int twincache_meta_parse(const twincache_meta_entry e[TWINCACHE_MK_COUNT], twincache_meta *m);

/* ---- graph helpers shared by the generator, the loader and the tools ---- */
/* Sets desc[j] = 1 for every node reachable from `node` (the node itself
 * included) in the DAG adj (N, ld_adj). desc has N entries. Returns the number
 * of marked nodes. */
uint32_t twincache_graph_descendants(const uint8_t *adj, uint32_t n, uint32_t ld_adj,
                                     uint32_t node, uint8_t *desc);
/* 1 when adj (N, ld_adj) has no directed cycle (and no self-loop), else 0. */
int twincache_graph_is_dag(const uint8_t *adj, uint32_t n, uint32_t ld_adj);

/* How much sorting the nodes by a score recovers the causal order
 * (Reisach et al. 2021, 2023; CausalDisco's order_alignment with tol 0):
 * over every directed path i ~> j, counted with multiplicity over all path
 * lengths, the fraction whose cause scores strictly lower than its effect,
 * ties counting 1/2. 0.5 is chance; near 1, sorting by the score nearly
 * gives the causal order. */
typedef struct twincache_sortability {
  double var;   /* score Var(X_j), population variance of the base world; NaN without paths */
  double r2;    /* score R^2_j = 1 - 1/[corr(X)^-1]_jj; NaN without paths, or when
                   corr(X) is singular (a constant node, S <= N, collinear
                   nodes: CausalDisco then falls back to regressions, we don't) */
  double paths; /* number of directed paths (0: both scores NaN) */
} twincache_sortability;

/* Sortability of g's base world (S, ld) on its DAG adj (N, ld_adj), over
 * the rows it holds (world_rows[0] when set, else S). Uses n_nodes,
 * n_samples, ld, ld_adj, adj, base, world_rows only; O(N^3 + S N^2). Returns 0,
 * TWINCACHE_EINVAL (NULL, no adj/base, not a DAG) or TWINCACHE_ENOMEM, with
 * twincache_last_error() saying which. Thread-safe (no shared state). */
int twincache_graph_sortability(const twincache_graph *g, twincache_sortability *out);

#ifdef __cplusplus
}
#endif
#endif /* TWINCACHE_FORMAT_H */
