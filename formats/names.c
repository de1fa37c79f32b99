/* names.c — the one name <-> code table of every choice a frame records
 * (graph family, mechanism, noise, intervention kind). twincache-gen parses
 * its flags with it, twincache-inspect prints with it, and the Python
 * package reads it through ctypes: a new kind is one row here (and its
 * generator file behind gen/'s dispatch table). */
#include <string.h>

#include "tc_error.h"
#include "twincache_format.h"

typedef struct tc_choice_table {
  const char *what;  /* for error messages: "graph family" */
  const char *const *names; /* names[code], NULL-terminated */
} tc_choice_table;

/* Row order is the code: names[c] is the name of code c. */
static const char *const k_families[] = {"er", "ba", "ws", "sf", "sbm", "rgg", "file", NULL};
static const char *const k_mechanisms[] = {"linear", "mlp", "rff", "sigmoid", "poly", "mixed", NULL};
static const char *const k_noises[] = {"gauss", "laplace", "uniform", "cauchy", "gumbel", NULL};
static const char *const k_kinds[] = {"do", "shift", "noise", "soft", NULL};

static const tc_choice_table k_tables[] = {
    [TWINCACHE_CHOICE_FAMILY] = {"graph family", k_families},
    [TWINCACHE_CHOICE_MECHANISM] = {"mechanism", k_mechanisms},
    [TWINCACHE_CHOICE_NOISE] = {"noise", k_noises},
    [TWINCACHE_CHOICE_INTER_KIND] = {"intervention kind", k_kinds},
};
#define TC_N_CHOICES ((int)(sizeof k_tables / sizeof k_tables[0]))

_Static_assert(sizeof k_families / sizeof k_families[0] == TWINCACHE_FAMILY_COUNT + 1,
               "one name per enum twincache_family");
_Static_assert(sizeof k_mechanisms / sizeof k_mechanisms[0] == TWINCACHE_MECH_COUNT + 1,
               "one name per enum twincache_mechanism");
_Static_assert(sizeof k_noises / sizeof k_noises[0] == TWINCACHE_NOISE_COUNT + 1,
               "one name per enum twincache_noise");
_Static_assert(sizeof k_kinds / sizeof k_kinds[0] == TWINCACHE_INTER_KIND_COUNT + 1,
               "one name per enum twincache_inter_kind");

int twincache_choice_count(int choice) {
  if (choice < 0 || choice >= TC_N_CHOICES) return 0;
  int n = 0;
  while (k_tables[choice].names[n]) n++;
  return n;
}

const char *twincache_choice_name(int choice, int code) {
  if (code < 0 || code >= twincache_choice_count(choice)) return NULL;
  return k_tables[choice].names[code];
}

const char *const *twincache_choice_names(int choice) {
  if (choice < 0 || choice >= TC_N_CHOICES) return NULL;
  return k_tables[choice].names;
}

int twincache_choice_code(int choice, const char *name, size_t len) {
  if (choice < 0 || choice >= TC_N_CHOICES)
    return tc_error_set(TWINCACHE_EINVAL, "unknown choice table %d", choice);
  if (!name) return tc_error_set(TWINCACHE_EINVAL, "no %s name", k_tables[choice].what);
  if (len == (size_t)-1) len = strlen(name);
  const char *const *names = k_tables[choice].names;
  for (int c = 0; names[c]; c++)
    if (strlen(names[c]) == len && memcmp(names[c], name, len) == 0) return c;
  return tc_error_set(TWINCACHE_EINVAL, "unknown %s '%.*s'", k_tables[choice].what,
                      (int)(len > 64 ? 64 : len), name);
}
