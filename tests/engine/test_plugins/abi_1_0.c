/* test.abi_1_0 — a plugin as the ABI 1.0 SDK built it: it declares minor 0, the 1.0 size of eg_host (the
 * table ended before run_info) and the 1.0 size of eg_node_type (it ended before describe, ABI 1.2). Every 1.x
 * host must keep loading it. Its node answers an empty object. */
#include <stddef.h>

#include "evalgraph/plugin.h"

static eg_status a_create(const eg_host *host, const char *params, void **instance, eg_buffer *error) {
  static int dummy;
  (void)host;
  (void)params;
  (void)error;
  *instance = &dummy;
  return EG_OK;
}
static void a_destroy(void *instance) { (void)instance; }
static eg_status a_process(void *instance, eg_call *call, const char *input, size_t len, eg_buffer *out) {
  (void)instance;
  (void)call;
  (void)input;
  (void)len;
  (void)out; /* no output */
  return EG_OK;
}

static const eg_node_type types[] = {{EG_NODE_TYPE_SIZE_1_0, EG_KIND_OPERATOR, "test.abi_1_0", "built for ABI 1.0",
                                      "{\"type\":\"object\"}", NULL, NULL, NULL, EG_FLAG_THREAD_SAFE, a_create, a_destroy,
                                      a_process, NULL, NULL, NULL /* describe, outputs: past the 1.0 size, never read */}};

static const eg_plugin plugin = {EG_MAGIC, 1, 0, sizeof(eg_plugin), EG_NODE_TYPE_SIZE_1_0, offsetof(eg_host, run_info),
                                 "test-abi-1-0", "1.0.0", "a plugin built for ABI 1.0", 1, types};

EG_EXPORT const eg_plugin *evalgraph_plugin_v1(void) { return &plugin; }
