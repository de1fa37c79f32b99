/* fuzz_meta.c — libFuzzer target for the meta record codec
 * (twincache_meta_parse): the input is split into the eight meta entries,
 * each present or absent, and parsed. Any return code is fine; a crash, an
 * ASan report, or an accepted record that breaks its own invariants (dims
 * beyond the format's limits, samples 0 (SCM-only) before version 4, a v2
 * record whose checksum or tag does not hold, a v1 record whose tag is not
 * its config's) is a bug.
 *
 * Input: byte 0 is the presence mask (bit k = entry k present); then, for
 * each present entry in key order, a u16 LE length and that many bytes
 * (clamped to what is left). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "twincache_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  twincache_meta_entry e[TWINCACHE_MK_COUNT];
  memset(e, 0, sizeof e);
  if (size == 0) return 0;
  unsigned mask = data[0];
  size_t pos = 1;
  for (int k = 0; k < TWINCACHE_MK_COUNT; k++) {
    if (!(mask & (1u << k))) continue;
    size_t n = 0;
    if (pos + 2 <= size) {
      n = (size_t)data[pos] | ((size_t)data[pos + 1] << 8);
      pos += 2;
    } else {
      pos = size;
    }
    if (n > size - pos) n = size - pos;
    /* a private copy: the parser must not read past n (ASan sees it) */
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) abort();
    memcpy(copy, data + pos, n);
    e[k].data = copy;
    e[k].size = n;
    pos += n;
  }
  twincache_meta m;
  int rc = twincache_meta_parse(e, &m);
  if (rc == TWINCACHE_OK) {
    const twincache_dims *d = &m.dims;
    if (m.version == 0 || m.version > TWINCACHE_FORMAT_VERSION || d->chunk_graphs == 0 ||
        d->chunk_graphs > TWINCACHE_MAX_CHUNK_GRAPHS || d->max_nodes == 0 ||
        d->max_nodes > TWINCACHE_MAX_NODES || (d->samples == 0 && m.version < 4) ||
        d->samples > TWINCACHE_MAX_SAMPLES ||
        d->max_inter > TWINCACHE_MAX_INTER || d->hidden > TWINCACHE_MAX_HIDDEN)
      abort();
    if (m.tag != twincache_meta_tag(m.config, m.config_len)) abort();
    if (m.version >= 2) { /* the stored check must be what the encoder writes */
      uint8_t check[TWINCACHE_META_CHECK_BYTES];
      twincache_meta_check_encode(&m, check);
      if (e[TWINCACHE_MK_CHECK].size != sizeof check || memcmp(check, e[TWINCACHE_MK_CHECK].data, sizeof check))
        abort();
    }
  } else if (rc > 0) {
    abort();
  }
  for (int k = 0; k < TWINCACHE_MK_COUNT; k++) free((void *)e[k].data);
  return 0;
}
