/* test_gen_unreadable — what twincache-gen tells a user who may not write
 * a cache (issue 19): a cache directory of mode 700 owned by another user
 * cannot be read either, so the message must not say "can be read but not
 * extended"; a directory of mode 755 (data.mdb 644) can be read, so it
 * says exactly that. Runs the generator as `nobody` through setpriv, so it
 * needs root; exits 77 (skipped) otherwise or without setpriv.
 * usage: test_gen_unreadable TWINCACHE_GEN TMPDIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen_test_util.h"

#define TG_SETPRIV "/usr/bin/setpriv"
#define TG_NOBODY "65534" /* nobody / nogroup */

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  if (geteuid() != 0 || access(TG_SETPRIV, X_OK) != 0) {
    printf("test_gen_unreadable: skipped (needs root and %s to run as another user)\n", TG_SETPRIV);
    return 77;
  }
  const char *gen = argv[1];
  char root[4096], dir[4200], err[8192];
  snprintf(root, sizeof root, "%s/gen_unreadable", argv[2]);
  snprintf(dir, sizeof dir, "%s/cache", root);
  tg_rmrf(dir); /* tg_rmrf removes one level */
  tg_rmrf(root);
  TC_REQUIRE(mkdir(root, 0755) == 0, "mkdir %s", root);
  TC_REQUIRE(chmod(root, 0755) == 0, "chmod %s", root); /* whatever the umask */
  /* an unfinished cache (10 of 20 graphs), so the generator must open it */
  const char *const make[] = {"--out", dir, "--graphs", "10", "--seed", "3", "--quiet", NULL};
  TC_REQUIRE(tg_run(gen, make, err, sizeof err) == 0, "make the cache: %s", err);
  const char *const as_nobody[] = {"--reuid=" TG_NOBODY, "--regid=" TG_NOBODY, "--clear-groups", gen, "--out",
                                   dir, "--graphs", "20", "--seed", "3", "--quiet", NULL};

  TC_REQUIRE(chmod(dir, 0700) == 0, "chmod 700 %s", dir);
  int rc = tg_run(TG_SETPRIV, as_nobody, err, sizeof err);
  TC_CHECK(rc == 1, "mode 700: exit %d, expected 1: %s", rc, err);
  TC_CHECK(strstr(err, "cannot read") && !strstr(err, "can be read"), "mode 700: message: %s", err);
  TC_CHECK(strstr(err, dir) != NULL, "mode 700: the message does not name %s: %s", dir, err);
  char *nl = strchr(err, '\n');
  TC_CHECK(nl && nl[1] == 0, "mode 700: not one line: %s", err);

  TC_REQUIRE(chmod(dir, 0755) == 0, "chmod 755 %s", dir);
  rc = tg_run(TG_SETPRIV, as_nobody, err, sizeof err);
  TC_CHECK(rc == 1, "mode 755: exit %d, expected 1: %s", rc, err);
  TC_CHECK(strstr(err, "can be read but not extended") != NULL, "mode 755: message: %s", err);

  if (tc_test_failures() == 0) {
    tg_rmrf(dir);
    tg_rmrf(root);
  }
  printf("test_gen_unreadable: %s\n", tc_test_failures() ? "FAILED" : "ok");
  return tc_test_failures() ? 1 : 0;
}
