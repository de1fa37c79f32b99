// tc_device_cuda.cu — the CUDA backend of twincache-train (contract in
// tc_device.h): device copies of the model, two compact slab buffers fed by
// a copy stream, one compute stream that expands a compact slab into the
// dense slab buffer and runs the kernels of twincache_kernels_cuda.h on it,
// and the events that order the two streams and time them.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_device.h"
#include "tc_error.h"
#include "tc_expand.h"
#include "twincache_kernels_cuda.h"

// ---- errors: where a failed CUDA call or kernels/ launcher gets its message.
// kernels/ includes nothing of ours, so its launchers return a bare status
// and leave the CUDA error in the runtime's per-thread state; this layer,
// the one that links both CUDA and the twincache libraries, reads it
// (cudaGetLastError, which also clears it) and leaves one tc_error message:
// "file:line: call: CUDA error NAME: text", file:line being the trainer's
// call, i.e. the step of the data path that failed.
static int tc_dev_fail(const char *file, int line, const char *call, cudaError_t e) {
  cudaGetLastError(); // consumed: the next failure reports its own error
  return tc_error_set(TWINCACHE_EDEVICE, "%s:%d: %.*s: CUDA error %s: %s", file, line,
                      (int)strcspn(call, "("), call, cudaGetErrorName(e), cudaGetErrorString(e));
}
static int tc_launcher_fail(const char *file, int line, const char *call, int status) {
  if (status == TWINCACHE_KERNELS_EINVAL)
    return tc_error_set(TWINCACHE_EDEVICE, "%s:%d: %.*s: sizes out of the kernel's range (nothing launched)",
                        file, line, (int)strcspn(call, "("), call);
  return tc_dev_fail(file, line, call, cudaGetLastError());
}
#define cudaCheck(call)                                                  \
  do {                                                                   \
    cudaError_t e_ = (call);                                             \
    if (e_ != cudaSuccess) return tc_dev_fail(__FILE__, __LINE__, #call, e_); \
  } while (0)
#define kernelCheck(call)                                                     \
  do {                                                                        \
    int k_ = (call);                                                          \
    if (k_ != 0) return tc_launcher_fail(__FILE__, __LINE__, #call, k_);      \
  } while (0)

#define TC_EVAL_SLOT 2 // loss_dev / loss_host entry of an evaluation

struct tc_cuda {
  twincache_batch_layout layout;    // the dense slab the model reads
  twincache_compact_layout compact; // the slabs copied in
  twincache_expand_offsets expand;
  int G, K, S, N;
  size_t P; // G*N*N pairs
  cudaStream_t copy_stream, compute_stream;
  // compact buffers 0 and 1 (copy stream writes, the expansion reads) and
  // the one dense buffer (expansion writes, the step reads: both on the
  // compute stream, so one is enough)
  void *slab[2], *dense;
  cudaEvent_t copy_start[2], copy_done[2], wait_begin[2], wait_end[2], expand_done[2],
      compute_done[2], reduce_begin[2], reduce_end[2];
  int events_made;
  int copy_pending[2], step_pending[2], compute_used[2];
  size_t copy_bytes[2]; // of the copy in flight into each buffer
  float *loss_host; // pinned (3)
  // model on the device: one array each, tensors at off[]
  size_t n_params, off[TC_MODEL_TENSORS], len[TC_MODEL_TENSORS];
  int decay[TC_MODEL_TENSORS];
  float *params, *grads, *m, *v;
  // features and activations (see tc_cpu in tc_model.h for the shapes)
  float *T, *C, *W_hat, *Pc, *feat, *pair_w, *h1pre, *h1, *h2pre, *h2, *logit, *dlogit, *dh2,
      *dh1, *loss_dev;
  uint8_t *observed;
  void *inv_work, *bce_work;
  // data parallel (tc_cuda_set_reduce): the sums' hook and its 2 doubles
  tc_cuda_reduce_fn reduce;
  void *reduce_user;
  double *tot;
  // the forward/backward of a step on buffer b, captured once and replayed:
  // one launch instead of ~30 (the step is launch-bound at small batches)
  cudaGraph_t graph[2];
  cudaGraphExec_t graph_exec[2];
  float graph_pos_weight[2];
  tc_cuda_timing timing;
};

extern "C" int tc_cuda_select(int local_rank, int forced, int *index, int *count) {
  *index = -1, *count = 0;
  cudaError_t e = cudaGetDeviceCount(count);
  if (e != cudaSuccess || *count <= 0) {
    cudaGetLastError();
    *count = 0;
    return tc_error_set(TWINCACHE_EDEVICE, "no usable CUDA device (%s)",
                        e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
  }
  *index = tc_device_index(local_rank, *count, forced);
  if (*index < 0)
    return tc_error_set(TWINCACHE_EDEVICE, "device %d does not exist: this process sees %d CUDA "
                        "device(s), numbered 0..%d (CUDA_VISIBLE_DEVICES applies first)", forced, *count,
                        *count - 1);
  cudaCheck(cudaSetDevice(*index));
  return 0;
}

extern "C" int tc_cuda_check(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n <= 0) {
    cudaGetLastError();
    return tc_error_set(TWINCACHE_EDEVICE, "no usable CUDA device (%s)",
                        e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
  }
  void *p = NULL;
  e = cudaMalloc(&p, 1 << 20);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return tc_error_set(TWINCACHE_EDEVICE, "CUDA test allocation failed (%s)", cudaGetErrorString(e));
  }
  cudaFree(p);
  return 0;
}

extern "C" void tc_cuda_device_name(char *name, size_t cap) {
  cudaDeviceProp prop;
  int dev = 0;
  if (!cap) return;
  name[0] = '\0';
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    snprintf(name, cap, "%s", prop.name);
}

extern "C" void *tc_cuda_host_alloc(size_t bytes, void *user) {
  void *p = NULL;
  cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    cudaGetLastError();
    tc_error_set(TWINCACHE_EDEVICE, "cudaHostAlloc of %zu bytes: CUDA error %s: %s", bytes, cudaGetErrorName(e),
                 cudaGetErrorString(e));
    return NULL;
  }
  return p; // page-aligned, so 64-byte aligned
}

extern "C" void tc_cuda_host_free(void *ptr, void *user) {
  if (ptr) cudaFreeHost(ptr);
}

static int tc_dev_alloc(void **p, size_t bytes) {
  cudaCheck(cudaMalloc(p, bytes ? bytes : 1));
  return 0;
}

static int tc_cuda_init(tc_cuda *c, const twincache_batch_layout *l, const tc_model *m) {
  c->layout = *l;
  c->G = (int)l->graphs, c->K = (int)l->inter, c->S = (int)l->samples, c->N = (int)l->nodes;
  c->P = (size_t)c->G * c->N * c->N;
  size_t P = c->P, H = TC_MODEL_H, F = TC_MODEL_F;
  cudaCheck(cudaStreamCreateWithFlags(&c->copy_stream, cudaStreamNonBlocking));
  cudaCheck(cudaStreamCreateWithFlags(&c->compute_stream, cudaStreamNonBlocking));
  for (int b = 0; b < 2; b++) {
    cudaCheck(cudaEventCreate(&c->copy_start[b]));
    cudaCheck(cudaEventCreate(&c->copy_done[b]));
    cudaCheck(cudaEventCreate(&c->wait_begin[b]));
    cudaCheck(cudaEventCreate(&c->wait_end[b]));
    cudaCheck(cudaEventCreate(&c->expand_done[b]));
    cudaCheck(cudaEventCreate(&c->compute_done[b]));
    cudaCheck(cudaEventCreate(&c->reduce_begin[b]));
    cudaCheck(cudaEventCreate(&c->reduce_end[b]));
    c->events_made = b + 1;
  }
  cudaCheck(cudaHostAlloc((void **)&c->loss_host, 3 * sizeof(float), cudaHostAllocDefault));
  if (twincache_compact_layout_init(&c->compact, l) != 0) {
    return tc_error_set(TWINCACHE_EDEVICE, "--batch %d: too large for the compact layout", (int)l->graphs);
  }
  tc_expand_offsets_init(&c->expand, &c->compact);
  for (int b = 0; b < 2; b++) {
    if (tc_dev_alloc(&c->slab[b], c->compact.bytes)) return TWINCACHE_EDEVICE;
    cudaCheck(cudaMemset(c->slab[b], 0, c->compact.bytes));
  }
  if (tc_dev_alloc(&c->dense, l->bytes)) return TWINCACHE_EDEVICE;
  cudaCheck(cudaMemset(c->dense, 0, l->bytes)); // the gaps between arrays stay 0
  c->n_params = m->n_params;
  memcpy(c->off, m->off, sizeof c->off);
  memcpy(c->len, m->len, sizeof c->len);
  memcpy(c->decay, m->decay, sizeof c->decay);
  size_t pb = sizeof(float) * m->n_params;
  if (tc_dev_alloc((void **)&c->params, pb) || tc_dev_alloc((void **)&c->grads, pb) ||
      tc_dev_alloc((void **)&c->m, pb) || tc_dev_alloc((void **)&c->v, pb))
    return TWINCACHE_EDEVICE;
  cudaCheck(cudaMemcpy(c->params, m->params, pb, cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(c->m, m->m, pb, cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(c->v, m->v, pb, cudaMemcpyHostToDevice));
  cudaCheck(cudaMemset(c->grads, 0, pb));
  float **pf[] = {&c->T, &c->C, &c->W_hat, &c->Pc, &c->pair_w, &c->logit, &c->dlogit};
  for (size_t i = 0; i < sizeof pf / sizeof pf[0]; i++)
    if (tc_dev_alloc((void **)pf[i], sizeof(float) * P)) return TWINCACHE_EDEVICE;
  float **ph[] = {&c->h1pre, &c->h1, &c->h2pre, &c->h2, &c->dh2, &c->dh1};
  for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++)
    if (tc_dev_alloc((void **)ph[i], sizeof(float) * P * H)) return TWINCACHE_EDEVICE;
  if (tc_dev_alloc((void **)&c->feat, sizeof(float) * P * F) ||
      tc_dev_alloc((void **)&c->loss_dev, sizeof(float) * 3) ||
      tc_dev_alloc((void **)&c->tot, sizeof(double) * 2) ||
      tc_dev_alloc((void **)&c->observed, (size_t)c->G * c->N) ||
      tc_dev_alloc(&c->inv_work, twincache_inverse_cuda_work_bytes(c->G, c->N)) ||
      tc_dev_alloc(&c->bce_work, twincache_bce_cuda_work_bytes(P)))
    return TWINCACHE_EDEVICE;
  cudaCheck(cudaDeviceSynchronize());
  return 0;
}

extern "C" int tc_cuda_create(tc_cuda **out, const twincache_batch_layout *l, const tc_model *m) {
  *out = NULL;
  tc_cuda *c = (tc_cuda *)calloc(1, sizeof *c);
  if (!c) {
    return tc_error_set(TWINCACHE_ENOMEM, "out of memory for the CUDA context");
  }
  if (tc_cuda_init(c, l, m) != 0) {
    tc_cuda_free(c);
    return TWINCACHE_EDEVICE;
  }
  *out = c;
  return 0;
}

extern "C" void tc_cuda_free(tc_cuda *c) {
  if (!c) return;
  // errors while tearing down are reported but cannot be acted upon
  if (c->compute_stream) cudaStreamSynchronize(c->compute_stream);
  if (c->copy_stream) cudaStreamSynchronize(c->copy_stream);
  void *dev[] = {c->slab[0], c->slab[1], c->dense, c->params, c->grads, c->m, c->v,
                 c->T, c->C, c->W_hat, c->Pc, c->feat, c->pair_w, c->h1pre, c->h1, c->h2pre,
                 c->h2, c->logit, c->dlogit, c->dh2, c->dh1, c->loss_dev, c->tot, c->observed,
                 c->inv_work, c->bce_work};
  for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
    if (dev[i]) cudaFree(dev[i]);
  for (int b = 0; b < 2; b++) {
    if (c->graph_exec[b]) cudaGraphExecDestroy(c->graph_exec[b]);
    if (c->graph[b]) cudaGraphDestroy(c->graph[b]);
  }
  if (c->loss_host) cudaFreeHost(c->loss_host);
  for (int b = 0; b < c->events_made; b++) {
    cudaEventDestroy(c->copy_start[b]);
    cudaEventDestroy(c->copy_done[b]);
    cudaEventDestroy(c->wait_begin[b]);
    cudaEventDestroy(c->wait_end[b]);
    cudaEventDestroy(c->expand_done[b]);
    cudaEventDestroy(c->compute_done[b]);
    cudaEventDestroy(c->reduce_begin[b]);
    cudaEventDestroy(c->reduce_end[b]);
  }
  if (c->copy_stream) cudaStreamDestroy(c->copy_stream);
  if (c->compute_stream) cudaStreamDestroy(c->compute_stream);
  free(c);
}

// Adds the timing of buffer buf's finished copy to the totals.
static int tc_collect_copy(tc_cuda *c, int buf) {
  if (!c->copy_pending[buf]) return 0;
  cudaCheck(cudaEventSynchronize(c->copy_done[buf]));
  float ms = 0.0f;
  cudaCheck(cudaEventElapsedTime(&ms, c->copy_start[buf], c->copy_done[buf]));
  c->timing.copy_ms += ms;
  c->timing.copies++;
  c->timing.copy_bytes += c->copy_bytes[buf];
  c->copy_pending[buf] = 0;
  return 0;
}

extern "C" int tc_cuda_copy(tc_cuda *c, int buf, const twincache_batch *batch) {
  const twincache_compact_batch *cb = batch->compact;
  if (!cb || cb->layout.bytes != c->compact.bytes || cb->used_bytes > c->compact.bytes) {
    return tc_error_set(TWINCACHE_EINVAL, "tc_cuda_copy needs a compact batch of the context's layout");
  }
  if (tc_collect_copy(c, buf)) return TWINCACHE_EDEVICE;
  // never overwrite a buffer the expansion of an earlier step may still read
  if (c->compute_used[buf]) cudaCheck(cudaStreamWaitEvent(c->copy_stream, c->expand_done[buf], 0));
  cudaCheck(cudaEventRecord(c->copy_start[buf], c->copy_stream));
  // only the prefix holding the batch: base worlds, indices, changed columns
  cudaCheck(cudaMemcpyAsync(c->slab[buf], cb->slab, cb->used_bytes, cudaMemcpyHostToDevice,
                            c->copy_stream));
  c->copy_bytes[buf] = cb->used_bytes;
  cudaCheck(cudaEventRecord(c->copy_done[buf], c->copy_stream));
  c->copy_pending[buf] = 1;
  return 0;
}

extern "C" int tc_cuda_copy_wait(tc_cuda *c, int buf) {
  cudaCheck(cudaEventSynchronize(c->copy_done[buf]));
  return tc_collect_copy(c, buf);
}

// Features and MLP forward (and backward with grad) of the slab at `slab`
// on the compute stream; the loss lands in loss_dev[slot].
static int tc_forward(tc_cuda *c, const void *slab, float pos_weight, int grad, int slot) {
  const int F = TC_MODEL_F, H = TC_MODEL_H, G = c->G, N = c->N, P = (int)c->P;
  void *s = (void *)c->compute_stream;
  float *p = c->params, *g = c->grads;
  const size_t *o = c->off;
  tc_batch_view b;
  tc_batch_view_init(&b, &c->layout, slab);
  kernelCheck(twincache_effects_cuda(c->T, c->observed, b.base, b.inter, b.target, b.node_mask,
                                     b.int_mask, b.rows, G, b.K, b.S, N, s));
  kernelCheck(twincache_corr_cuda(c->C, b.base, b.node_mask, b.rows, b.K + 1, G, b.S, N, s));
  kernelCheck(twincache_inverse_cuda(c->W_hat, c->Pc, c->T, c->observed, c->C, b.node_mask, G,
                                     N, c->inv_work, s));
  kernelCheck(twincache_pair_features_cuda(c->feat, c->pair_w, c->T, c->observed, c->C,
                                           c->W_hat, c->Pc, b.node_mask, G, N, s));
  kernelCheck(twincache_linear_forward_cuda(c->h1pre, c->feat, p + o[0], p + o[1], P, F, H, s));
  kernelCheck(twincache_gelu_forward_cuda(c->h1, c->h1pre, (size_t)P * H, s));
  kernelCheck(twincache_linear_forward_cuda(c->h2pre, c->h1, p + o[2], p + o[3], P, H, H, s));
  kernelCheck(twincache_gelu_forward_cuda(c->h2, c->h2pre, (size_t)P * H, s));
  kernelCheck(twincache_linear_forward_cuda(c->logit, c->h2, p + o[4], p + o[5], P, H, 1, s));
  kernelCheck(twincache_bce_cuda(grad ? c->dlogit : NULL, c->loss_dev + slot, c->logit, b.adj,
                                 c->pair_w, (size_t)P, pos_weight, c->bce_work, s));
  if (!grad) return 0;
  kernelCheck(twincache_linear_backward_cuda(c->dh2, g + o[4], g + o[5], c->dlogit, c->h2,
                                             p + o[4], P, H, 1, s));
  kernelCheck(twincache_gelu_backward_cuda(c->dh2, c->h2pre, c->dh2, (size_t)P * H, s));
  kernelCheck(twincache_linear_backward_cuda(c->dh1, g + o[2], g + o[3], c->dh2, c->h1,
                                             p + o[2], P, H, H, s));
  kernelCheck(twincache_gelu_backward_cuda(c->dh1, c->h1pre, c->dh1, (size_t)P * H, s));
  kernelCheck(twincache_linear_backward_cuda(NULL, g + o[0], g + o[1], c->dh1, c->feat, p + o[0],
                                             P, F, H, s));
  return 0;
}

// Captures the forward/backward on buffer buf into a graph (once, and again
// if pos_weight changes: it is a kernel argument). Parameters, gradients and
// activations sit at fixed addresses, so a replay reads the current values.
static int tc_capture_step(tc_cuda *c, int buf, float pos_weight) {
  if (c->graph_exec[buf] && c->graph_pos_weight[buf] == pos_weight) return 0;
  if (c->graph_exec[buf]) cudaCheck(cudaGraphExecDestroy(c->graph_exec[buf]));
  if (c->graph[buf]) cudaCheck(cudaGraphDestroy(c->graph[buf]));
  c->graph_exec[buf] = NULL, c->graph[buf] = NULL;
  cudaStream_t s = c->compute_stream;
  cudaCheck(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  int rc = tc_forward(c, c->dense, pos_weight, 1, buf);
  cudaGraph_t g = NULL;
  cudaError_t e = cudaStreamEndCapture(s, &g); // always end: the stream must leave capture
  if (rc) {
    if (g) cudaGraphDestroy(g);
    return TWINCACHE_EDEVICE;
  }
  cudaCheck(e);
  c->graph[buf] = g;
  cudaCheck(cudaGraphInstantiate(&c->graph_exec[buf], g, 0));
  c->graph_pos_weight[buf] = pos_weight;
  return 0;
}

extern "C" void tc_cuda_set_reduce(tc_cuda *c, tc_cuda_reduce_fn reduce, void *user) {
  c->reduce = reduce, c->reduce_user = user;
}

// Data parallel, between backward and AdamW on the compute stream: the
// gradients of buffer buf's batch become the job's (tc_device.h). tot starts
// as this batch's {W, weighted loss sum}, the BCE kernel's first two doubles.
static int tc_reduce_step(tc_cuda *c, int buf) {
  cudaStream_t s = c->compute_stream;
  cudaCheck(cudaEventRecord(c->reduce_begin[buf], s));
  cudaCheck(cudaMemcpyAsync(c->tot, c->bce_work, 2 * sizeof(double), cudaMemcpyDeviceToDevice, s));
  kernelCheck(twincache_grad_weight_cuda(c->grads, c->n_params, c->tot, (void *)s));
  if (c->reduce(c->reduce_user, c->grads, c->n_params, c->tot, (void *)s) != 0)
    return TWINCACHE_EDEVICE; // the hook's message names the NCCL call
  kernelCheck(twincache_grad_unweight_cuda(c->grads, c->n_params, c->tot, c->loss_dev + buf,
                                           (void *)s));
  cudaCheck(cudaEventRecord(c->reduce_end[buf], s));
  return 0;
}

extern "C" int tc_cuda_step(tc_cuda *c, int buf, const tc_optim *o, float lr, int t) {
  cudaStream_t s = c->compute_stream;
  if (tc_capture_step(c, buf, o->pos_weight)) return TWINCACHE_EDEVICE;
  // the events around the wait time how long compute stalled on this copy
  cudaCheck(cudaEventRecord(c->wait_begin[buf], s));
  cudaCheck(cudaStreamWaitEvent(s, c->copy_done[buf], 0));
  cudaCheck(cudaEventRecord(c->wait_end[buf], s));
  // the compact slab into the dense buffer the step's graph reads
  kernelCheck(twincache_expand_cuda(c->dense, c->slab[buf], &c->expand, (void *)s));
  cudaCheck(cudaEventRecord(c->expand_done[buf], s));
  cudaCheck(cudaGraphLaunch(c->graph_exec[buf], s));
  if (c->reduce && tc_reduce_step(c, buf)) return TWINCACHE_EDEVICE;
  for (int k = 0; k < TC_MODEL_TENSORS; k++)
    kernelCheck(twincache_adamw_cuda(c->params + c->off[k], c->grads + c->off[k],
                                     c->m + c->off[k], c->v + c->off[k], c->len[k], lr, o->beta1,
                                     o->beta2, o->eps, c->decay[k] ? o->weight_decay : 0.0f, t,
                                     (void *)s));
  cudaCheck(cudaMemcpyAsync(c->loss_host + buf, c->loss_dev + buf, sizeof(float),
                            cudaMemcpyDeviceToHost, s));
  cudaCheck(cudaEventRecord(c->compute_done[buf], s));
  c->compute_used[buf] = 1;
  c->step_pending[buf] = 1;
  return 0;
}

extern "C" int tc_cuda_step_result(tc_cuda *c, int buf, float *loss) {
  cudaCheck(cudaEventSynchronize(c->compute_done[buf]));
  *loss = c->loss_host[buf];
  if (c->step_pending[buf]) {
    float wait_ms = 0.0f, step_ms = 0.0f, expand_ms = 0.0f;
    cudaCheck(cudaEventElapsedTime(&wait_ms, c->wait_begin[buf], c->wait_end[buf]));
    cudaCheck(cudaEventElapsedTime(&step_ms, c->wait_end[buf], c->compute_done[buf]));
    cudaCheck(cudaEventElapsedTime(&expand_ms, c->wait_end[buf], c->expand_done[buf]));
    c->timing.copy_wait_ms += wait_ms;
    c->timing.step_ms += step_ms;
    c->timing.expand_ms += expand_ms;
    if (c->reduce) {
      float reduce_ms = 0.0f;
      cudaCheck(cudaEventElapsedTime(&reduce_ms, c->reduce_begin[buf], c->reduce_end[buf]));
      c->timing.reduce_ms += reduce_ms;
    }
    c->timing.steps++;
    c->step_pending[buf] = 0;
  }
  return 0;
}

extern "C" int tc_cuda_eval(tc_cuda *c, const void *host_slab, float pos_weight, float *loss,
                            float *logit, float *T, float *pair_w) {
  cudaStream_t s = c->compute_stream;
  size_t pb = sizeof(float) * c->P;
  // a dense slab, into the dense buffer: the compute stream orders it after
  // the last step's reads and before the next step's expansion
  cudaCheck(cudaMemcpyAsync(c->dense, host_slab, c->layout.bytes, cudaMemcpyHostToDevice, s));
  if (tc_forward(c, c->dense, pos_weight, 0, TC_EVAL_SLOT)) return TWINCACHE_EDEVICE;
  cudaCheck(cudaMemcpyAsync(c->loss_host + TC_EVAL_SLOT, c->loss_dev + TC_EVAL_SLOT, sizeof(float),
                            cudaMemcpyDeviceToHost, s));
  cudaCheck(cudaMemcpyAsync(logit, c->logit, pb, cudaMemcpyDeviceToHost, s));
  cudaCheck(cudaMemcpyAsync(T, c->T, pb, cudaMemcpyDeviceToHost, s));
  cudaCheck(cudaMemcpyAsync(pair_w, c->pair_w, pb, cudaMemcpyDeviceToHost, s));
  cudaCheck(cudaStreamSynchronize(s));
  *loss = c->loss_host[TC_EVAL_SLOT];
  return 0;
}

extern "C" int tc_cuda_download(tc_cuda *c, tc_model *m) {
  size_t pb = sizeof(float) * c->n_params;
  cudaCheck(cudaStreamSynchronize(c->compute_stream));
  cudaCheck(cudaMemcpy(m->params, c->params, pb, cudaMemcpyDeviceToHost));
  cudaCheck(cudaMemcpy(m->m, c->m, pb, cudaMemcpyDeviceToHost));
  cudaCheck(cudaMemcpy(m->v, c->v, pb, cudaMemcpyDeviceToHost));
  return 0;
}

extern "C" void tc_cuda_get_timing(const tc_cuda *c, tc_cuda_timing *t) { *t = c->timing; }

static int tc_bench_run(void *host, void *dev, size_t bytes, int reps, double *gb_per_s) {
  cudaEvent_t a = NULL, b = NULL;
  int rc = 1;
  float ms = 0.0f;
  if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) goto cleanup;
  if (cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) goto cleanup; // warm-up
  if (cudaEventRecord(a, 0) != cudaSuccess) goto cleanup;
  for (int i = 0; i < reps; i++)
    if (cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) goto cleanup;
  if (cudaEventRecord(b, 0) != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess ||
      cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
    goto cleanup;
  *gb_per_s = ms > 0 ? (double)bytes * reps / (ms * 1e-3) / 1e9 : 0.0;
  rc = 0;
cleanup:
  if (rc) rc = tc_dev_fail(__FILE__, __LINE__, "the H2D benchmark", cudaGetLastError());
  if (a) cudaEventDestroy(a);
  if (b) cudaEventDestroy(b);
  return rc;
}

extern "C" int tc_cuda_bench_h2d(size_t bytes, int reps, double *gb_per_s) {
  void *host = NULL, *dev = NULL;
  int rc = 1;
  *gb_per_s = 0.0;
  if (cudaHostAlloc(&host, bytes, cudaHostAllocDefault) != cudaSuccess ||
      cudaMalloc(&dev, bytes) != cudaSuccess) {
    rc = tc_dev_fail(__FILE__, __LINE__, "allocating the H2D benchmark's buffers", cudaGetLastError());
    goto cleanup;
  }
  memset(host, 1, bytes);
  rc = tc_bench_run(host, dev, bytes, reps, gb_per_s);
cleanup:
  if (host) cudaFreeHost(host);
  if (dev) cudaFree(dev);
  return rc;
}
