/* test_gen_resume — kill -9 of a real generator process in the middle of a
 * run, then the same command again: the cache ends byte-identical to one
 * uninterrupted run. Then the same with SIGINT (exit 130, a resume hint,
 * committed graphs kept). The test polls the cache's committed count through
 * a read-only LMDB environment; it never sleeps a fixed time.
 * usage: test_gen_resume TWINCACHE_GEN TMPDIR */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen_test_util.h"

#define GRAPHS "40000"
#define GRAPHS_N 40000ull

static const char *gen;

static void args_for(const char *dir, const char **args) {
  const char *a[] = {"--out", dir, "--graphs", GRAPHS, "--threads", "2", "--samples", "16",
                     "--nodes", "3:6", "--chunk-graphs", "50", "--quiet", NULL};
  memcpy(args, a, sizeof a);
}

/* Polls until the running generator has committed some graphs (or exited). */
static uint64_t wait_committed(pid_t pid, const char *dir) {
  struct timespec pause = {0, 2000000}; /* 2 ms between polls */
  for (int i = 0; i < 60000; i++) {
    uint64_t n = tg_committed(dir);
    if (n > 0) return n;
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) TC_REQUIRE(0, "generator exited before committing (status %d)", st);
    nanosleep(&pause, NULL);
  }
  TC_REQUIRE(0, "nothing committed after 120 s");
  return 0;
}

static void interrupted_then_resumed(const char *dir, const char *ref, int sig) {
  const char *args[16];
  char err[8192], why[512];
  tg_rmrf(dir);
  args_for(dir, args);
  pid_t pid = tg_spawn(gen, args);
  TC_REQUIRE(pid > 0, "spawn");
  uint64_t seen = wait_committed(pid, dir);
  kill(pid, sig);
  int rc = tg_wait(pid);
  uint64_t after = tg_committed(dir);
  printf("signal %d: %llu graphs committed when seen, %llu after the kill, exit %d\n", sig,
         (unsigned long long)seen, (unsigned long long)after, rc);
  if (after >= GRAPHS_N) {
    /* the run finished before the signal landed: nothing was resumed */
    printf("signal %d: the generator finished first; resume not exercised this time\n", sig);
  } else {
    TC_REQUIRE(after >= seen, "committed went backwards: %llu < %llu", (unsigned long long)after,
          (unsigned long long)seen);
    if (sig == SIGKILL) TC_REQUIRE(rc == 128 + SIGKILL, "exit %d after SIGKILL", rc);
    if (sig == SIGINT) TC_REQUIRE(rc == 130, "exit %d after SIGINT, expected 130", rc);
  }
  /* the same command again */
  const char *args2[16];
  args_for(dir, args2);
  args2[12] = NULL; /* drop --quiet to see the summary */
  rc = tg_run(gen, args2, err, sizeof err);
  TC_REQUIRE(rc == 0, "resume exit %d: %s", rc, err);
  if (after > 0 && after < GRAPHS_N) TC_REQUIRE(strstr(err, "resumed") != NULL, "no 'resumed' in: %s", err);
  TC_REQUIRE(tg_committed(dir) == GRAPHS_N, "committed %llu after resume", (unsigned long long)tg_committed(dir));
  TC_REQUIRE(tg_cache_compare(ref, dir, why, sizeof why) == 0, "resumed cache differs: %s", why);
}

/* A second generator on a cache that one is writing is refused with one line
 * (exit 1) and leaves the first one's work intact. */
static void second_writer_refused(const char *dir) {
  const char *big[] = {"--out", dir, "--graphs", "50000000", "--threads", "1", "--samples", "16",
                       "--nodes", "3:6", "--chunk-graphs", "50", "--quiet", NULL};
  char err[8192];
  tg_rmrf(dir);
  pid_t pid = tg_spawn(gen, big);
  TC_REQUIRE(pid > 0, "spawn");
  wait_committed(pid, dir); /* it holds the writer lock from before its first commit */
  const char *second[] = {"--out", dir, "--graphs", "50000000", "--threads", "1", "--samples", "16",
                          "--nodes", "3:6", "--chunk-graphs", "50", NULL};
  int rc = tg_run(gen, second, err, sizeof err);
  TC_REQUIRE(rc == 1, "second writer exit %d, expected 1: %s", rc, err);
  TC_REQUIRE(strstr(err, "another twincache-gen is writing") != NULL, "unclear refusal: %s", err);
  TC_REQUIRE(strchr(err, '\n') == strrchr(err, '\n'), "refusal is more than one line: %s", err);
  kill(pid, SIGKILL);
  tg_wait(pid);
  /* the lock dies with its holder: the same command resumes at once */
  const char *small[] = {"--out", dir, "--graphs", "200", "--threads", "1", "--samples", "16",
                         "--nodes", "3:6", "--chunk-graphs", "50", "--quiet", NULL};
  rc = tg_run(gen, small, err, sizeof err);
  TC_REQUIRE(rc == 0, "run after the killed writer: exit %d: %s", rc, err);
  tg_rmrf(dir);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  gen = argv[1];
  char root[4096], ref[4600], killed[4600], interrupted[4600], err[8192];
  snprintf(root, sizeof root, "%s/gen_resume", argv[2]);
  snprintf(ref, sizeof ref, "%s/ref", root);
  snprintf(killed, sizeof killed, "%s/killed", root);
  snprintf(interrupted, sizeof interrupted, "%s/interrupted", root);
  tg_rmrf(ref);
  tg_rmrf(killed);
  tg_rmrf(interrupted);
  TC_REQUIRE(tg_mkdir(root), "mkdir %s", root);

  const char *args[16];
  args_for(ref, args);
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == 0, "reference run exit %d: %s", rc, err);
  TC_REQUIRE(tg_committed(ref) == GRAPHS_N, "reference committed");

  interrupted_then_resumed(killed, ref, SIGKILL);
  interrupted_then_resumed(interrupted, ref, SIGINT);
  second_writer_refused(killed);

  /* SIGINT message says how to resume */
  tg_rmrf(interrupted);
  args_for(interrupted, args);
  int fds[2];
  TC_REQUIRE(pipe(fds) == 0, "pipe");
  pid_t pid = fork();
  if (pid == 0) {
    char *argv2[32];
    int n = 0;
    argv2[n++] = (char *)gen;
    for (int i = 0; args[i]; i++) argv2[n++] = (char *)args[i];
    argv2[n] = NULL;
    dup2(fds[1], 2);
    close(fds[0]);
    execv(gen, argv2);
    _exit(127);
  }
  close(fds[1]);
  wait_committed(pid, interrupted);
  kill(pid, SIGINT);
  size_t used = 0;
  ssize_t got;
  while ((got = read(fds[0], err + used, sizeof err - 1 - used)) > 0) used += (size_t)got;
  err[used] = 0;
  close(fds[0]);
  rc = tg_wait(pid);
  if (rc == 130) TC_REQUIRE(strstr(err, "resume") != NULL, "SIGINT message lacks a resume hint: %s", err);

  tg_rmrf(ref);
  tg_rmrf(killed);
  tg_rmrf(interrupted);
  tg_rmrf(root);
  printf("test_gen_resume: ok\n");
  return 0;
}
