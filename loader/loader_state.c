/* loader_state.c — a loader's position in its stream: the resume state's
 * 64 bytes (encode, decode) and the epochs' bounds (batches per epoch, an
 * epoch's end, the state at an epoch's start). The rules of a resume,
 * what a bare position (magic 0) may carry among them, are the plan's
 * (tc_state_head, tc_plan_resume, tc_mix_resume). */
#include <stdint.h>
#include <string.h>

#include "tc_error.h"
#include "tc_loader.h"
#include "twincache_loader.h"

/* ---- the state's bytes ------------------------------------------------------ */
static void put_le(uint8_t *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

void twincache_loader_state_encode(const twincache_loader_state *s,
                                   uint8_t buf[TWINCACHE_LOADER_STATE_BYTES]) {
  put_le(buf + 0, s->seed, 8);
  put_le(buf + 8, s->next_seq, 8);
  put_le(buf + 16, s->magic, 4);
  buf[20] = (uint8_t)TWINCACHE_LOADER_STATE_VERSION;
  buf[21] = (uint8_t)((s->shuffle & 1) | (s->drop_last & 1) << 1 | (s->equal_ranks & 1) << 2 | (s->bucket & 1) << 3 |
                      (s->local_nodes != 0) << 4);
  put_le(buf + 22, (uint16_t)(s->batch_size - 1), 2);
  put_le(buf + 24, s->cache_tag, 8);
  put_le(buf + 32, s->local_nodes ? s->local_nodes : s->index_begin, 8); /* local: index_begin is 0 */
  put_le(buf + 40, s->index_end, 8);
  put_le(buf + 48, s->origin, 8);
  put_le(buf + 56, s->world_size, 4);
  put_le(buf + 60, s->rank, 4);
}

int twincache_loader_state_decode(const uint8_t buf[TWINCACHE_LOADER_STATE_BYTES],
                                  twincache_loader_state *s) {
  twincache_loader_state r;
  memset(&r, 0, sizeof r);
  r.seed = get_le(buf + 0, 8);
  r.next_seq = get_le(buf + 8, 8);
  r.magic = (uint32_t)get_le(buf + 16, 4);
  r.cache_tag = get_le(buf + 24, 8);
  r.index_begin = get_le(buf + 32, 8);
  r.index_end = get_le(buf + 40, 8);
  int ok = r.magic == TWINCACHE_LOADER_STATE_MAGIC;
  if (get_le(buf + 20, 4) == 1) { /* version 1: before elastic resume */
    r.version = 1;
    r.batch_size = (uint32_t)get_le(buf + 48, 4);
    r.world_size = (uint32_t)get_le(buf + 52, 4);
    r.rank = (uint32_t)get_le(buf + 56, 4);
    r.shuffle = buf[60];
    r.drop_last = buf[61];
    r.equal_ranks = buf[62];
    ok = ok && buf[63] == 0;
  } else {
    r.version = buf[20];
    r.shuffle = buf[21] & 1;
    r.drop_last = buf[21] >> 1 & 1;
    r.equal_ranks = buf[21] >> 2 & 1;
    r.bucket = buf[21] >> 3 & 1;
    r.batch_size = (uint32_t)get_le(buf + 22, 2) + 1;
    r.origin = get_le(buf + 48, 8);
    r.world_size = (uint32_t)get_le(buf + 56, 4);
    r.rank = (uint32_t)get_le(buf + 60, 4);
    if (buf[21] >> 4 & 1) { /* local mode: M where index_begin (0) was */
      ok = ok && r.index_begin >= 1 && r.index_begin <= UINT32_MAX;
      r.local_nodes = (uint32_t)r.index_begin;
      r.index_begin = 0;
    }
    ok = ok && r.version == TWINCACHE_LOADER_STATE_VERSION && (buf[21] & ~31u) == 0;
  }
  if (!ok) {
    memset(s, 0, sizeof *s);
    return tc_error_set(TWINCACHE_EINVAL, "loader state: not a twincache loader state (magic %#x, version %u at "
                        "byte 20, flags %#x at byte 21; expected %#x, version 1 or %u, flags within 0x1f)",
                        (unsigned)r.magic, (unsigned)buf[20], (unsigned)buf[21],
                        (unsigned)TWINCACHE_LOADER_STATE_MAGIC, (unsigned)TWINCACHE_LOADER_STATE_VERSION);
  }
  *s = r;
  return TWINCACHE_OK;
}

/* A mixture's epoch is E global batches; this rank's share is its seqs
 * whose global batch lies in one. */
uint64_t twincache_loader_batches_per_epoch(const twincache_loader *l) {
  if (l->nsrc) return (l->mix.epoch_batches + l->mix.world - 1) / l->mix.world;
  return l->plan.bpe;
}
uint64_t twincache_loader_batches_total(const twincache_loader *l) {
  return l->nsrc ? l->mix.total : l->plan.total;
}

uint64_t twincache_loader_epoch_end(const twincache_loader *l, uint64_t seq) {
  if (l->nsrc) { /* the first seq whose global batch is in a later epoch */
    const tc_mix *m = &l->mix;
    if (seq >= m->total) return m->total;
    uint64_t end_k = (tc_mix_epoch(m, tc_mix_global(m, seq)) + 1) * m->epoch_batches;
    uint64_t end = end_k <= m->origin + m->rank ? 0 : (end_k - m->origin - m->rank + m->world - 1) / m->world;
    return end < m->total ? end : m->total;
  }
  if (seq >= l->plan.total) return l->plan.total;
  tc_plan_batch b;
  tc_plan_batch_at(&l->plan, seq, &b);
  return b.epoch_first_seq + b.epoch_batches;
}

int twincache_loader_epoch_state(const twincache_loader *l, uint64_t epoch, twincache_loader_state *s) {
  if (!l || !s) return tc_error_set(TWINCACHE_EINVAL, "twincache_loader_epoch_state: NULL argument");
  if (l->nsrc) { /* the state after every rank consumed epochs [0, epoch) */
    tc_mix m = l->mix;
    if (epoch > UINT64_MAX / m.epoch_batches)
      return tc_error_set(TWINCACHE_EINVAL, "epoch %llu is past the stream", (unsigned long long)epoch);
    int rc = tc_mix_set_origin(&m, epoch * m.epoch_batches);
    if (rc != TWINCACHE_OK) return rc;
    tc_mix_state(&m, 0, s);
    return TWINCACHE_OK;
  }
  return tc_plan_epoch_state(&l->plan, epoch, s);
}
