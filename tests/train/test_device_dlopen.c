/* test_device_dlopen: tc_device_dlopen.c, the trainer's CUDA backend loaded
 * at run time from a plugin (the portable wheel's). Each case runs in a
 * child process, since a process loads its plugin once: no plugin found
 * ("no CUDA plugin", naming where it looked); a named file that is
 * missing, not a plugin, or from another build (each refused with its
 * reason); and the stand-in fake_cuda_plugin.c, through which every call is
 * forwarded, a failed call's message crosses from the plugin's error state
 * to ours, and a failed gradient sum's message crosses the other way and
 * back. The real plugin, without and with a GPU: cuda_dlopen.sh.
 * Usage: test_train_device_dlopen FAKE_PLUGIN.so OTHER_BUILD.so NOT_A_PLUGIN.so */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tc_device.h"
#include "tc_error.h"
#include "tc_test.h"
#include "twincache_format.h"

static const char *msg(void) { return twincache_last_error(); }

/* a check that fails with a message holding `want` (and every part of
 * `also` when given) */
static void refused(const char *want, const char *also) {
  int idx, cnt;
  TC_CHECK(tc_cuda_select(0, -1, &idx, &cnt) == TWINCACHE_EDEVICE && idx == -1 && cnt == 0);
  TC_CHECK(tc_cuda_check() == TWINCACHE_EDEVICE);
  TC_CHECK(strstr(msg(), want) != NULL, "message '%s' lacks '%s'", msg(), want);
  if (also) TC_CHECK(strstr(msg(), also) != NULL, "message '%s' lacks '%s'", msg(), also);
  TC_CHECK(tc_cuda_host_alloc(64, NULL) == NULL);
  tc_cuda *c = (tc_cuda *)&c;
  TC_CHECK(tc_cuda_create(&c, NULL, NULL) == TWINCACHE_EDEVICE && c == NULL);
  char name[16] = "x";
  tc_cuda_device_name(name, sizeof name);
  TC_CHECK(name[0] == '\0');
}

static int fail_sum(void *user, float *grads, size_t n, double *tot, void *stream) {
  return tc_error_set(TWINCACHE_EIO, "ncclAllReduce: stand-in failure %d", *(int *)user);
}
static int double_sum(void *user, float *grads, size_t n, double *tot, void *stream) {
  (*(int *)user)++;
  tot[0] *= 2, tot[1] *= 3; /* loss 0.5 becomes 0.75 */
  return n == 4 ? 0 : tc_error_set(TWINCACHE_EIO, "wrong gradient count");
}

static void through_fake(void) {
  int idx, cnt;
  TC_CHECK(tc_cuda_select(4, -1, &idx, &cnt) == 0 && idx == 1 && cnt == 3, "%d of %d", idx, cnt);
  TC_CHECK(tc_cuda_select(0, 2, &idx, &cnt) == 0 && idx == 2);
  TC_CHECK(tc_cuda_select(0, 3, &idx, &cnt) == TWINCACHE_EDEVICE && strstr(msg(), "no such device"));
  TC_CHECK(tc_cuda_check() == TWINCACHE_EDEVICE && strcmp(msg(), "fake plugin: no device here") == 0, "%s", msg());
  char name[32];
  tc_cuda_device_name(name, sizeof name);
  TC_CHECK(strcmp(name, "fake device") == 0);
  void *p = tc_cuda_host_alloc(100, NULL);
  TC_CHECK(p != NULL);
  tc_cuda_host_free(p, NULL);
  TC_CHECK(tc_cuda_host_alloc((size_t)1 << 41, NULL) == NULL && strstr(msg(), "host allocation refused"));
  double gbs = 0;
  TC_CHECK(tc_cuda_bench_h2d(1, 1, &gbs) == 0 && gbs == 12.5);

  tc_cuda *c = NULL;
  TC_REQUIRE(tc_cuda_create(&c, NULL, NULL) == 0 && c != NULL);
  float loss = -1;
  tc_optim o = {0};
  TC_CHECK(tc_cuda_copy(c, 0, NULL) == 0 && tc_cuda_copy_wait(c, 0) == 0);
  TC_CHECK(tc_cuda_copy(c, 2, NULL) == TWINCACHE_EDEVICE && strstr(msg(), "no such buffer"));
  TC_CHECK(tc_cuda_step(c, 0, &o, 0.1f, 1) == 0 && tc_cuda_step_result(c, 0, &loss) == 0 && loss == 0.5f);
  int calls = 0;
  tc_cuda_set_reduce(c, double_sum, &calls);
  TC_CHECK(tc_cuda_step(c, 1, &o, 0.1f, 2) == 0 && tc_cuda_step_result(c, 1, &loss) == 0, "%s", msg());
  TC_CHECK(calls == 1 && loss == 0.75f, "hook called %d times, loss %g", calls, loss);
  /* the trainer's message, set in the hook, is the failed step's */
  int code = 7;
  tc_cuda_set_reduce(c, fail_sum, &code);
  TC_CHECK(tc_cuda_step(c, 0, &o, 0.1f, 3) == TWINCACHE_EDEVICE);
  TC_CHECK(strcmp(msg(), "ncclAllReduce: stand-in failure 7") == 0, "message '%s'", msg());
  tc_cuda_set_reduce(c, NULL, NULL);
  TC_CHECK(tc_cuda_step(c, 0, &o, 0.1f, 4) == 0 && tc_cuda_step_result(c, 0, &loss) == 0 && loss == 0.5f);
  TC_CHECK(tc_cuda_eval(c, NULL, 1, &loss, NULL, NULL, NULL) == TWINCACHE_EDEVICE && strstr(msg(), "no evaluation"));
  tc_cuda_timing t;
  tc_cuda_get_timing(c, &t);
  TC_CHECK(t.copies == 1 && t.steps == 3, "%llu copies, %llu steps", (unsigned long long)t.copies,
           (unsigned long long)t.steps);
  TC_CHECK(tc_cuda_download(c, NULL) == 0);
  tc_cuda_free(c);
  tc_cuda_free(NULL);
}

/* runs one case in a child with TWINCACHE_CUDA_PLUGIN=plugin (NULL: unset);
 * counts a failure when the child's checks failed */
static void in_child(const char *label, const char *plugin, void (*body)(const char *, const char *),
                     const char *want, const char *also) {
  pid_t pid = fork();
  TC_REQUIRE(pid >= 0);
  if (pid == 0) {
    if (plugin) setenv("TWINCACHE_CUDA_PLUGIN", plugin, 1);
    else unsetenv("TWINCACHE_CUDA_PLUGIN");
    body(want, also);
    _exit(tc_test_result());
  }
  int st = 0;
  TC_REQUIRE(waitpid(pid, &st, 0) == pid);
  TC_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case '%s' failed", label);
}
static void fake_body(const char *want, const char *also) { through_fake(); }

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 4, "usage: test_train_device_dlopen FAKE_PLUGIN.so OTHER_BUILD.so NOT_A_PLUGIN.so");
  /* this program's folder holds no plugin: where it looked is named */
  in_child("none found", NULL, refused, "no CUDA plugin", "libtwincache_cuda.so in /");
  in_child("missing file", "/nonexistent/libtwincache_cuda.so", refused,
           "CUDA plugin /nonexistent/libtwincache_cuda.so does not load", NULL);
  in_child("not a plugin", argv[3], refused, "is not a twincache CUDA plugin", argv[3]);
  in_child("another build", argv[2], refused, "comes from another twincache build (version 0.0.9", argv[2]);
  in_child("stand-in", argv[1], fake_body, NULL, NULL);
  return tc_test_finish("test_train_device_dlopen");
}
