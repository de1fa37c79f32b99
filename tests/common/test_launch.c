/* test_launch — common/tc_launch: rank and size from each launcher's
 * variables set alone, the documented order when several are set, a pair
 * half set or malformed (TC_LAUNCH_BAD naming the variable), and none set
 * (TC_LAUNCH_NONE, the message naming what was looked for). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tc_launch.h"
#include "tc_test.h"

static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                                    "SLURM_PROCID", "SLURM_NTASKS", "RANK", "WORLD_SIZE"};

static void clear_all(void) {
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unsetenv(names[i]);
}

/* Sets one pair (NULL leaves a variable unset). */
static void set_pair(const char *rn, const char *rv, const char *sn, const char *sv) {
  if (rv) setenv(rn, rv, 1);
  if (sv) setenv(sn, sv, 1);
}

static void each_alone(void) {
  for (size_t p = 0; p < 4; p++) {
    clear_all();
    set_pair(names[2 * p], "3", names[2 * p + 1], "8");
    uint32_t r = 99, s = 99;
    const char *src = NULL;
    char msg[256] = "";
    TC_CHECK(tc_launch_rank(&r, &s, &src, msg, sizeof msg) == TC_LAUNCH_OK, "%s: %s", names[2 * p], msg);
    TC_CHECK(r == 3 && s == 8, "%s: rank %u size %u", names[2 * p], r, s);
    TC_CHECK(src && strstr(src, names[2 * p]) == src, "%s: source %s", names[2 * p], src ? src : "(null)");
  }
}

static void order(void) {
  /* mpirun inside a Slurm allocation: Open MPI's rank wins over SLURM_PROCID */
  clear_all();
  set_pair("SLURM_PROCID", "0", "SLURM_NTASKS", "1");
  set_pair("OMPI_COMM_WORLD_RANK", "5", "OMPI_COMM_WORLD_SIZE", "6");
  set_pair("RANK", "1", "WORLD_SIZE", "2");
  uint32_t r = 0, s = 0;
  const char *src = NULL;
  TC_CHECK(tc_launch_rank(&r, &s, &src, NULL, 0) == TC_LAUNCH_OK && r == 5 && s == 6, "OMPI first: %u/%u", r, s);
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("OMPI_COMM_WORLD_SIZE");
  set_pair("PMI_RANK", "2", "PMI_SIZE", "4");
  TC_CHECK(tc_launch_rank(&r, &s, &src, NULL, 0) == TC_LAUNCH_OK && r == 2 && s == 4, "PMI before Slurm");
  unsetenv("PMI_RANK");
  unsetenv("PMI_SIZE");
  TC_CHECK(tc_launch_rank(&r, &s, &src, NULL, 0) == TC_LAUNCH_OK && r == 0 && s == 1, "Slurm before torchrun");
}

static void refused(void) {
  struct {
    const char *rv, *sv, *needle;
  } cases[] = {
      {"3", NULL, "SLURM_NTASKS"},   {NULL, "4", "SLURM_PROCID"}, {"4", "4", "SLURM_PROCID"},
      {"-1", "4", "SLURM_PROCID"},   {"1", "0", "SLURM_NTASKS"},  {"x", "4", "SLURM_PROCID"},
      {"1", "4x", "SLURM_NTASKS"},   {"", "4", "SLURM_PROCID"},   {"1", "99999999999", "SLURM_NTASKS"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    clear_all();
    set_pair("SLURM_PROCID", cases[i].rv, "SLURM_NTASKS", cases[i].sv);
    set_pair("RANK", "0", "WORLD_SIZE", "1"); /* a later valid pair is not used instead */
    uint32_t r = 77, s = 77;
    const char *src = "untouched";
    char msg[256] = "";
    TC_CHECK(tc_launch_rank(&r, &s, &src, msg, sizeof msg) == TC_LAUNCH_BAD, "case %zu accepted", i);
    TC_CHECK(strstr(msg, cases[i].needle) != NULL, "case %zu: message '%s'", i, msg);
    TC_CHECK(r == 77 && s == 77 && strcmp(src, "untouched") == 0, "case %zu: outputs written", i);
  }
  clear_all();
  uint32_t r = 77, s = 77;
  const char *src = "untouched";
  char msg[256] = "";
  TC_CHECK(tc_launch_rank(&r, &s, &src, msg, sizeof msg) == TC_LAUNCH_NONE, "none set");
  TC_CHECK(strstr(msg, "SLURM_PROCID") && strstr(msg, "OMPI_COMM_WORLD_RANK") && strstr(msg, "PMI_RANK"),
           "message '%s'", msg);
  TC_CHECK(r == 77 && s == 77, "outputs written");
}

int main(void) {
  each_alone();
  order();
  refused();
  return tc_test_finish("common_launch");
}
