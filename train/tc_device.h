/* tc_device.h — the CUDA backend of twincache-train behind one plain-C
 * header. Built from tc_device_cuda.cu when nvcc is found, either linked
 * into the trainer or as the plugin libtwincache_cuda.so that
 * tc_device_dlopen.c loads at run time (tc_device_plugin.h: the portable
 * wheel's trainer); where there is no plugin, tc_device_dlopen.c's
 * functions report "built without CUDA" — so call sites carry no #ifdef
 * (llm.c style).
 *
 * Data path: batches come from the loader in the compact layout
 * (twincache_loader.h). Two device compact buffers (0 and 1) and one dense
 * slab buffer. tc_cuda_copy enqueues ONE cudaMemcpyAsync of the used prefix
 * of a pinned compact slab into a buffer on the copy stream, after the
 * expansion that last read that buffer (event); tc_cuda_step makes the
 * compute stream wait for that buffer's copy (event), expands it into the
 * dense buffer (twincache_expand_cuda) and enqueues a whole training step
 * on it (features, MLP forward/backward, BCE: one CUDA graph per buffer,
 * captured at its first step; then AdamW). The caller releases a loader slot
 * only after tc_cuda_copy_wait on its buffer.
 *
 * Every int function returns 0 on success or TWINCACHE_EDEVICE (ENOMEM,
 * EINVAL where said), leaving one message for twincache_last_error() that
 * names file:line of the failed call and the CUDA error (or the missing
 * build). kernels/ keeps no message: this layer reads the CUDA error its
 * launchers leave (cudaGetLastError) and writes it. Nothing is printed.
 * Not thread-safe: one host thread drives a context. */
#ifndef TC_DEVICE_H
#define TC_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "tc_model.h"
#include "twincache_loader.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_cuda tc_cuda;

/* Which of `count` visible GPUs a process uses: `forced` (--gpu) when >= 0,
 * else local_rank % count, so the ranks of one node spread over its GPUs
 * round-robin (more ranks than GPUs share them). -1 when count < 1 or forced
 * is not below count. Pure: tested without a GPU. */
static inline int tc_device_index(int local_rank, int count, int forced) {
  if (count < 1 || forced >= count || local_rank < 0) return -1;
  return forced >= 0 ? forced : local_rank % count;
}
/* Makes device tc_device_index(local_rank, visible count, forced) this
 * thread's current device (cudaSetDevice); *index and *count say which of
 * how many. TWINCACHE_EDEVICE when no device is visible or forced is out of
 * range (the message says which and how many there are). */
int tc_cuda_select(int local_rank, int forced, int *index, int *count);
/* 0 when a usable GPU exists (a device is visible and a test allocation
 * works on the current device); otherwise TWINCACHE_EDEVICE with the reason
 * as the message. */
int tc_cuda_check(void);
/* Name of the current device into name[cap] (empty without CUDA). */
void tc_cuda_device_name(char *name, size_t cap);

/* Pinned host memory for the loader's slots (the loader's alloc/free
 * callbacks). Returns NULL on failure, the CUDA error as the message. */
void *tc_cuda_host_alloc(size_t bytes, void *user);
void tc_cuda_host_free(void *ptr, void *user);

/* Creates the context for batches of layout l and uploads the model's
 * params and AdamW moments. */
int tc_cuda_create(tc_cuda **out, const twincache_batch_layout *l, const tc_model *m);
void tc_cuda_free(tc_cuda *c); /* accepts NULL; synchronises first */

/* Enqueues the copy of a compact batch (batch->compact, pinned slab of the
 * context's layout; its used_bytes move) into buffer buf. A dense batch is
 * refused. */
int tc_cuda_copy(tc_cuda *c, int buf, const twincache_batch *batch);
/* Blocks until buffer buf's last copy has completed. */
int tc_cuda_copy_wait(tc_cuda *c, int buf);
/* Data parallel: after set_reduce, every step sums its gradients over the
 * ranks between backward and AdamW, on the compute stream: the gradients
 * (grads, n floats) are weighted by the batch's pair weight, then `reduce`
 * is called to enqueue in-place sums of grads and of tot (2 doubles: pair
 * weight, weighted loss sum) on `stream` (all device pointers), then they
 * are divided by the summed weight (twincache_grad_weight_cuda and _unweight)
 * and the step's loss is the job's. reduce returns 0 or a status with its
 * message; the step then fails with it. NULL: one process, as before. */
typedef int (*tc_cuda_reduce_fn)(void *user, float *grads, size_t n, double *tot, void *stream);
void tc_cuda_set_reduce(tc_cuda *c, tc_cuda_reduce_fn reduce, void *user);
/* Enqueues one training step on buffer buf with learning rate lr, AdamW
 * step t (>= 1). */
int tc_cuda_step(tc_cuda *c, int buf, const tc_optim *o, float lr, int t);
/* Blocks until the last step on buf has finished; returns its loss and adds
 * its event timings to the totals. */
int tc_cuda_step_result(tc_cuda *c, int buf, float *loss);

/* Forward pass only on a dense host slab (copied on the compute stream into
 * the dense buffer, synchronously); writes the loss and copies the logits, T and pair weights (each
 * G*N*N floats) to host arrays. */
int tc_cuda_eval(tc_cuda *c, const void *host_slab, float pos_weight, float *loss, float *logit,
                 float *T, float *pair_w);

/* Copies params and AdamW moments back into m (for checkpoints). */
int tc_cuda_download(tc_cuda *c, tc_model *m);

/* Event-timed totals since create. */
typedef struct tc_cuda_timing {
  double copy_ms;      /* copy-stream time of the H2D slab copies */
  double copy_wait_ms; /* compute stream stalled waiting for a copy */
  double step_ms;      /* compute-stream time of the steps, expansion included */
  double expand_ms;    /* of which expanding the compact slabs */
  double reduce_ms;    /* of which the gradient all-reduce, weighting included (set_reduce) */
  uint64_t copies, copy_bytes, steps; /* copy_bytes: compact prefixes moved */
} tc_cuda_timing;
void tc_cuda_get_timing(const tc_cuda *c, tc_cuda_timing *t);

/* Plain pinned cudaMemcpy H2D of `bytes`, `reps` times after a warm-up;
 * sets the bandwidth in GB/s (1e9 bytes/s). */
int tc_cuda_bench_h2d(size_t bytes, int reps, double *gb_per_s);

#ifdef __cplusplus
}
#endif
#endif /* TC_DEVICE_H */
