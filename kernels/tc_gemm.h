/* tc_gemm.h — the linear layers' matrix products on the device (gemm.cu),
 * used by linear.cu's linear forward/backward. Device pointers; launched on
 * `stream` (a cudaStream_t as void*); 0 or TWINCACHE_KERNELS_EDEVICE.
 *   forward:  out (P,O) = in (P,I) . w^T, w (O,I)
 *   backward: din (P,I) = dout (P,O) . w (skipped when din is NULL),
 *             dw (O,I)  = dout^T . in  (all zero when P is 0) */
#ifndef TC_GEMM_H
#define TC_GEMM_H

#ifdef __cplusplus
extern "C" {
#endif
int tc_linear_gemm_forward(float *out, const float *in, const float *w, int P, int I, int O,
                           void *stream);
int tc_linear_gemm_backward(float *din, float *dw, const float *dout, const float *in,
                            const float *w, int P, int I, int O, void *stream);
#ifdef __cplusplus
}
#endif
#endif
