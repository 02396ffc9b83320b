/* test.passthrough — written in plain C99 against plugin.h only (this also proves the header is C).
 * Returns its input object unchanged, so the node's output is {"text": ..., "_meta": ...}. Used by the
 * engine tests and the throughput benchmark. */
#include <stdlib.h>
#include <string.h>

#include "evalgraph/plugin.h"

static void release_copy(eg_buffer *b) {
  free(b->private_data);
  b->data = NULL;
  b->size = 0;
  b->release = NULL;
  b->private_data = NULL;
}

static eg_status pt_create(const eg_host *host, const char *params, void **instance, eg_buffer *error) {
  static int dummy;
  (void)host;
  (void)params;
  (void)error;
  *instance = &dummy;
  return EG_OK;
}

static void pt_destroy(void *instance) { (void)instance; }

static eg_status pt_process(void *instance, eg_call *call, const char *input, size_t len, eg_buffer *out) {
  char *copy = (char *)malloc(len > 0 ? len : 1);
  (void)instance;
  (void)call;
  if (copy == NULL) return EG_ERROR;
  memcpy(copy, input, len);
  out->data = copy;
  out->size = len;
  out->private_data = copy;
  out->release = release_copy;
  return EG_OK;
}

static const char *const reads[] = {"text", NULL};
static const char *const writes[] = {"text", NULL};

static const eg_node_type types[] = {{sizeof(eg_node_type), EG_KIND_OPERATOR, "test.passthrough",
                                      "Returns its input unchanged", "{\"type\":\"object\",\"additionalProperties\":false}",
                                      reads, NULL, writes, EG_FLAG_THREAD_SAFE, pt_create, pt_destroy, pt_process, NULL, NULL, NULL}};

static const eg_plugin plugin = {EG_MAGIC,          EG_ABI_MAJOR, EG_ABI_MINOR, sizeof(eg_plugin), sizeof(eg_node_type),
                                 sizeof(eg_host),   "test-passthrough", "1.0.0", "pass-through operator in C", 1, types};

EG_EXPORT const eg_plugin *evalgraph_plugin_v1(void) { return &plugin; }
