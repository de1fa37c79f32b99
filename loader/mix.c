/* mix.c — the mixture plan (tc_mix.h): counts by largest remainder, each
 * source's endless order, global batch k to (source, position, graph). */
#include <math.h>
#include <string.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_mix.h"
#include "tc_plan.h"

int tc_mix_counts(const double *w, uint32_t nsrc, uint32_t G, uint32_t *c) {
  if (nsrc == 0 || nsrc > TC_MIX_MAX)
    return tc_error_set(TWINCACHE_EINVAL, "mixture: %u sources (1..%d allowed)", nsrc, TC_MIX_MAX);
  double sum = 0;
  for (uint32_t i = 0; i < nsrc; i++) {
    if (!isfinite(w[i]) || w[i] <= 0)
      return tc_error_set(TWINCACHE_EINVAL, "mixture: weight %u is %g (a finite number > 0 is needed)", i, w[i]);
    sum += w[i];
  }
  if (!isfinite(sum)) return tc_error_set(TWINCACHE_EINVAL, "mixture: the weights' sum is not finite");
  if (G < nsrc)
    return tc_error_set(TWINCACHE_EINVAL, "mixture: batch_size %u is below the %u sources (each takes >= 1 graph per batch)",
                        G, nsrc);
  double frac[TC_MIX_MAX];
  uint32_t given = 0;
  for (uint32_t i = 0; i < nsrc; i++) {
    double q = (double)G * (w[i] / sum);
    double f = floor(q);
    if (f > G) f = G;
    c[i] = (uint32_t)f;
    frac[i] = q - f;
    given += c[i];
  }
  while (given > G) { /* rounding can only overshoot by float error: trim the largest */
    uint32_t j = 0;
    for (uint32_t i = 1; i < nsrc; i++)
      if (c[i] > c[j]) j = i;
    c[j]--, given--;
  }
  while (given < G) { /* largest remainder, ties to the lower index */
    uint32_t j = 0;
    for (uint32_t i = 1; i < nsrc; i++)
      if (frac[i] > frac[j]) j = i;
    c[j]++, given++;
    frac[j] = -1;
  }
  for (uint32_t i = 0; i < nsrc; i++) {
    if (c[i] > 0) continue;
    uint32_t j = 0; /* the largest count gives one (it is >= 2 as G >= nsrc) */
    for (uint32_t k = 1; k < nsrc; k++)
      if (c[k] > c[j]) j = k;
    c[j]--, c[i] = 1;
  }
  return 0;
}

int tc_mix_init(tc_mix *m, const double *weights, const uint64_t *begin, const uint64_t *n, uint32_t nsrc,
                uint32_t batch, uint32_t world, uint32_t rank, uint32_t epochs, int shuffle, uint64_t seed) {
  memset(m, 0, sizeof *m);
  int rc = tc_mix_counts(weights, nsrc, batch, m->count);
  if (rc) return rc;
  if (world == 0 || rank >= world)
    return tc_error_set(TWINCACHE_EINVAL, "mixture: rank %u is not below world_size %u", rank, world);
  m->nsrc = nsrc;
  m->batch = batch;
  m->world = world, m->rank = rank, m->epochs = epochs;
  m->shuffle = shuffle ? 1 : 0;
  m->seed = seed;
  uint32_t slot = 0;
  for (uint32_t i = 0; i < nsrc; i++) {
    if (n[i] == 0) return tc_error_set(TWINCACHE_EINVAL, "mixture: source %u has no graphs", i);
    m->begin[i] = begin[i], m->n[i] = n[i];
    m->first[i] = slot;
    slot += m->count[i];
    if (m->count[i] > m->count[m->lead]) m->lead = i;
  }
  m->epoch_batches = (n[m->lead] + m->count[m->lead] - 1) / m->count[m->lead];
  return tc_mix_set_origin(m, 0);
}

int tc_mix_set_origin(tc_mix *m, uint64_t k0) {
  if (m->epochs == 0) {
    m->origin = k0;
    m->total = UINT64_MAX;
    return 0;
  }
  uint64_t end = m->epochs * m->epoch_batches;
  if (k0 > end)
    return tc_error_set(TWINCACHE_EINVAL, "resume state: %llu global batches is past the end of the %u epochs (%llu)",
                        (unsigned long long)k0, m->epochs, (unsigned long long)end);
  m->origin = k0;
  m->total = (end - k0 + m->world - 1) / m->world;
  return 0;
}

/* The permutation key of source src's own epoch e. */
static uint64_t source_key(uint64_t seed, uint32_t src, uint64_t e) {
  tc_rng r;
  tc_rng_init(&r, seed ^ (0x9E3779B97F4A7C15ULL * ((uint64_t)src + 1)), e);
  return tc_rng_u64(&r);
}

uint64_t tc_mix_key(const tc_mix *m, uint32_t src, uint64_t e) { return source_key(m->seed, src, e); }

uint64_t tc_mix_index_key(const tc_mix *m, uint32_t src, uint64_t pos, uint64_t key) {
  uint64_t n = m->n[src], q = pos % n;
  if (!m->shuffle) return m->begin[src] + q;
  return m->begin[src] + tc_permute(q, n, key);
}

uint64_t tc_mix_index(const tc_mix *m, uint32_t src, uint64_t pos) {
  return tc_mix_index_key(m, src, pos, m->shuffle ? source_key(m->seed, src, pos / m->n[src]) : 0);
}

void tc_mix_slot(const tc_mix *m, uint64_t k, uint32_t slot, uint32_t *src, uint64_t *pos, uint64_t *index) {
  uint32_t i = 0;
  while (i + 1 < m->nsrc && slot >= m->first[i + 1]) i++;
  uint64_t p = k * m->count[i] + (slot - m->first[i]);
  *src = i;
  *pos = p;
  *index = tc_mix_index(m, i, p);
}

void tc_mix_set_tag(tc_mix *m, const uint64_t *tags, const uint8_t *fresh) {
  uint64_t h = tc_fnv1a64_update(TC_FNV1A64_BASIS, &m->nsrc, sizeof m->nsrc);
  uint32_t n_fresh = 0;
  for (uint32_t i = 0; i < m->nsrc; i++) {
    uint64_t f[4] = {tags[i], m->begin[i], m->n[i], m->count[i]};
    h = tc_fnv1a64_update(h, f, sizeof f);
    n_fresh += fresh && fresh[i];
  }
  if (n_fresh && n_fresh < m->nsrc) h = tc_fnv1a64_update(h, fresh, m->nsrc); /* stored and fresh mixed */
  m->tag = h;
}

void tc_mix_state(const tc_mix *m, uint64_t next_seq, twincache_loader_state *s) {
  memset(s, 0, sizeof *s);
  s->seed = m->seed;
  s->next_seq = next_seq;
  s->magic = TWINCACHE_LOADER_STATE_MAGIC;
  s->version = TWINCACHE_LOADER_STATE_VERSION;
  s->cache_tag = m->tag;
  s->index_begin = 0;
  s->index_end = m->epoch_batches;
  s->batch_size = m->batch;
  s->world_size = m->world;
  s->rank = m->rank;
  s->shuffle = m->shuffle;
  s->drop_last = 0;
  s->equal_ranks = 1;
  s->origin = m->origin;
}

int tc_mix_resume(tc_mix *m, const twincache_loader_state *r, uint64_t *next_seq) {
  int rc = tc_state_head(r, m->seed, m->total, TWINCACHE_LOADER_STATE_VERSION, next_seq);
  if (rc) return rc < 0 ? rc : TWINCACHE_OK;
  twincache_loader_state want;
  tc_mix_state(m, 0, &want);
  /* before the identity: cache_tag hashes the counts, so it differs too */
  if (r->batch_size != m->batch)
    return tc_error_set(TWINCACHE_EINVAL, "resume state field batch_size %u differs from this mixture's %u: the "
                        "batch size sets each source's count per batch, so a mixture resumes at its own "
                        "batch_size only", (unsigned)r->batch_size, (unsigned)m->batch);
  if ((rc = tc_state_match(r, &want, "this mixture's")) != TWINCACHE_OK) return rc;
  if (r->equal_ranks != 1 || r->batch_size != m->batch)
    return tc_error_set(TWINCACHE_EINVAL, "resume state fields equal_ranks %u, batch_size %u differ from this "
                        "mixture's 1, %u (the batch size sets each source's count per batch)",
                        (unsigned)r->equal_ranks, (unsigned)r->batch_size, (unsigned)m->batch);
  if (r->world_size == 0 || r->rank >= r->world_size)
    return tc_error_set(TWINCACHE_EINVAL, "resume state fields world_size %u, rank %u describe no stream",
                        (unsigned)r->world_size, (unsigned)r->rank);
  if (r->next_seq > (UINT64_MAX - r->origin) / r->world_size)
    return tc_error_set(TWINCACHE_EINVAL, "resume state fields origin %llu, next_seq %llu overflow",
                        (unsigned long long)r->origin, (unsigned long long)r->next_seq);
  uint64_t k = r->origin + r->next_seq * r->world_size;
  if (r->world_size == m->world) { /* the same stream: continue its numbering */
    if ((rc = tc_mix_set_origin(m, r->origin)) != TWINCACHE_OK) return rc;
    if (m->total != UINT64_MAX && r->next_seq > m->total)
      return tc_error_set(TWINCACHE_EINVAL, "resume state next_seq %llu is past the end of the stream (%llu batches)",
                          (unsigned long long)r->next_seq, (unsigned long long)m->total);
    *next_seq = r->next_seq;
    return TWINCACHE_OK;
  }
  if ((rc = tc_mix_set_origin(m, k)) != TWINCACHE_OK) return rc; /* elastic */
  *next_seq = 0;
  return TWINCACHE_OK;
}
