/* tc_device_plugin.c — the one symbol libtwincache_cuda.so exports: the
 * table of tc_device_cuda.cu's entry points (tc_device_plugin.h) that a
 * trainer built without CUDA loads (tc_device_dlopen.c). Everything else in
 * the plugin, the CUDA runtime included, stays local to it. */
#include "tc_device_plugin.h"
#include "tc_error.h"
#include "twincache_format.h"

static int plugin_set_error(int status, const char *message) { return tc_error_set(status, "%s", message); }

__attribute__((visibility("default"))) const tc_cuda_plugin *twincache_cuda_plugin(void) {
  static const tc_cuda_plugin table = {
      .abi = TC_CUDA_PLUGIN_ABI, .table_bytes = sizeof(tc_cuda_plugin), .sizes = TC_CUDA_PLUGIN_SIZES,
      .version = TWINCACHE_VERSION_STRING, .last_error = twincache_last_error, .set_error = plugin_set_error,
      .select = tc_cuda_select, .check = tc_cuda_check, .device_name = tc_cuda_device_name,
      .host_alloc = tc_cuda_host_alloc, .host_free = tc_cuda_host_free, .create = tc_cuda_create,
      .free = tc_cuda_free, .copy = tc_cuda_copy, .copy_wait = tc_cuda_copy_wait,
      .set_reduce = tc_cuda_set_reduce, .step = tc_cuda_step, .step_result = tc_cuda_step_result,
      .eval = tc_cuda_eval, .download = tc_cuda_download, .get_timing = tc_cuda_get_timing,
      .bench_h2d = tc_cuda_bench_h2d,
  };
  return &table;
}
