/* twincache_kernels_cuda.h — CUDA twins of twincache_kernels.h.
 *
 * Same arguments as the CPU reference of the same name (all pointers are
 * DEVICE pointers), plus the stream to launch on (a cudaStream_t passed as
 * void* so this header needs no CUDA include) and, where a kernel needs
 * scratch memory, a workspace argument. No cuBLAS: the linear layers' products
 * are gemm.cu's own kernel.
 *
 * Every function launches asynchronously on `stream`, checks the launch
 * (cudaPeekAtLastError) and every CUDA call, and returns 0 on success or
 * TWINCACHE_KERNELS_EDEVICE / TWINCACHE_KERNELS_EINVAL (twincache_kernels.h):
 * the CUDA error stays for the caller's cudaGetLastError; nothing is kept
 * or printed. None synchronises.
 * Only built when nvcc is found (library twincache_kernels_cuda).
 */
#ifndef TWINCACHE_KERNELS_CUDA_H
#define TWINCACHE_KERNELS_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "twincache_kernels.h" /* twincache_expand_offsets */

#ifdef __cplusplus
extern "C" {
#endif

int twincache_effects_cuda(float *T, uint8_t *observed, const float *base, const float *inter,
                           const uint8_t *target, const uint8_t *node_mask,
                           const uint8_t *int_mask, const uint32_t *rows, int G, int K, int S, int N,
                           void *stream);

int twincache_corr_cuda(float *C, const float *base, const uint8_t *node_mask, const uint32_t *rows,
                        int rows_ld, int G, int S, int N, void *stream);

/* work: device scratch of twincache_inverse_cuda_work_bytes(G, N) bytes (0,
 * and work may be NULL, when a graph's matrices fit in shared memory). */
size_t twincache_inverse_cuda_work_bytes(int G, int N);
int twincache_inverse_cuda(float *W_hat, float *Pc, const float *T, const uint8_t *observed,
                           const float *C, const uint8_t *node_mask, int G, int N, void *work,
                           void *stream);

int twincache_pair_features_cuda(float *feat, float *pair_w, const float *T,
                                 const uint8_t *observed, const float *C, const float *W_hat,
                                 const float *Pc, const uint8_t *node_mask, int G, int N,
                                 void *stream);

/* Linear layer: out (P,I->O) = in . w^T + b; backward: din (may be NULL), dw,
 * db (may be NULL). Each output element is a sum over k ascending with every
 * product and sum rounded on its own (no FMA): bit for bit what
 * twincache_linear_gemm_emulate computes on the host. */
int twincache_linear_forward_cuda(float *out, const float *in, const float *w, const float *b,
                                  int P, int I, int O, void *stream);
int twincache_linear_backward_cuda(float *din, float *dw, float *db, const float *dout,
                                   const float *in, const float *w, int P, int I, int O,
                                   void *stream);
/* The products of the two functions above (without bias) computed on the host
 * by the GEMM kernel's own code, block by block and thread by thread: out =
 * in . w^T, din = dout . w, dw = dout^T . in; a NULL output is skipped. Lets
 * a machine without a GPU test the kernel's indexing and rounding. Not
 * thread-safe (static scratch); for tests. */
void twincache_linear_gemm_emulate(float *out, float *din, float *dw, const float *in,
                                   const float *w, const float *dout, int P, int I, int O);

int twincache_gelu_forward_cuda(float *out, const float *in, size_t n, void *stream);
int twincache_gelu_backward_cuda(float *din, const float *in, const float *dout, size_t n,
                                 void *stream);

/* loss: device float receiving the loss; work: device scratch of
 * twincache_bce_cuda_work_bytes(P) bytes, whose first two doubles hold W
 * (the sum of pair weights) and the W-weighted loss sum after the call. */
size_t twincache_bce_cuda_work_bytes(size_t P);
int twincache_bce_cuda(float *dlogit, float *loss, const float *logit, const uint8_t *adj,
                       const float *pair_w, size_t P, float pos_weight, void *work,
                       void *stream);

int twincache_adamw_cuda(float *param, const float *grad, float *m, float *v, size_t n,
                         float lr, float beta1, float beta2, float eps, float weight_decay,
                         int t, void *stream);

/* The data-parallel weighting (twincache_kernels.h): the same arithmetic, the
 * scalars in device memory (wsum: one double; tot: two; loss: one float),
 * so a step's all-reduce runs without the host reading them. */
int twincache_grad_weight_cuda(float *grad, size_t n, const double *wsum, void *stream);
int twincache_grad_unweight_cuda(float *grad, size_t n, const double *tot, float *loss,
                                 void *stream);

/* Expansion of a compact slab into a dense slab on the device (both device
 * pointers), the twin of twincache_expand_cpu: bit for bit the same output.
 * One block per (graph, intervention) builds the twin rows in shared memory
 * (base rows, then the stored columns) and writes them coalesced; one more
 * block per graph writes the other arrays. */
int twincache_expand_cuda(void *dense, const void *compact, const twincache_expand_offsets *o,
                          void *stream);
/* The same kernel's code run on the host, block by block and thread by
 * thread between its barriers (`threads` threads per block): lets a machine
 * without a GPU test the kernel's indexing against twincache_expand_cpu.
 * Not thread-safe (static scratch); for tests. */
void twincache_expand_emulate(void *dense, const void *compact, const twincache_expand_offsets *o,
                              int threads);

/* The fresh-world sampler on the device, twin of twincache_sample_cpu (bit
 * for bit: the same per-thread code, built with --fmad=false): *b is a host
 * struct whose array pointers are DEVICE pointers (zig tables included);
 * noise, mean, sd (scratch) and base, inter (out) are device arrays of the
 * sizes twincache_sample_cpu documents. Three kernels on `stream`.
 * TWINCACHE_KERNELS_EINVAL when N > TWINCACHE_SAMPLE_MAX_NODES or a graph is an iSCM
 * (flags bit 1: the G flag bytes are copied to the host first, synchronously). The
 * kinds are device arrays, so the caller runs twincache_sample_check on the host
 * copies first (a soft world reaching the kernel comes out all NaN). */
int twincache_sample_cuda(const twincache_scm_batch *b, float *noise, float *mean, float *sd,
                          float *base, float *inter, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* TWINCACHE_KERNELS_CUDA_H */
