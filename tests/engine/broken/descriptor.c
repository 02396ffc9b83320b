/* One source, several deliberately broken plugins, chosen by BROKEN_CASE at compile time:
 *   1 wrong magic   2 ABI major 2 in a v1 entry   3 newer ABI minor (EG_ABI_MINOR + 1: 1.2 against a 1.1 host)
 *   4 duplicate node type name
 *   5 unresolved symbol (links with undefined references allowed)   6 only a v2 entry symbol
 *   7 an output declared with a type the host does not know (ABI 1.3's outputs) */
#include <stddef.h>

#include "evalgraph/plugin.h"

static eg_status b_create(const eg_host *h, const char *p, void **inst, eg_buffer *err) {
  (void)h; (void)p; (void)err;
  *inst = NULL;
  return EG_ERROR;
}
static void b_destroy(void *inst) { (void)inst; }
static eg_status b_process(void *inst, eg_call *c, const char *in, size_t len, eg_buffer *out) {
  (void)inst; (void)c; (void)in; (void)len; (void)out;
  return EG_ERROR;
}

#if BROKEN_CASE == 4
#define TYPE_NAME "test.passthrough"
#else
#define TYPE_NAME "broken.node"
#endif

#if BROKEN_CASE == 7
#define OUTPUTS "{\"score\": {\"type\": \"float\"}}"
#else
#define OUTPUTS NULL
#endif

static const eg_node_type types[] = {{sizeof(eg_node_type), EG_KIND_OPERATOR, TYPE_NAME, "broken", "{}", NULL, NULL, NULL,
                                      0, b_create, b_destroy, b_process, NULL, NULL, OUTPUTS}};

#if BROKEN_CASE == 1
#define MAGIC 0xDEADBEEFU
#else
#define MAGIC EG_MAGIC
#endif
#if BROKEN_CASE == 2
#define MAJOR 2
#else
#define MAJOR EG_ABI_MAJOR
#endif
#if BROKEN_CASE == 3
#define MINOR (EG_ABI_MINOR + 1)
#else
#define MINOR EG_ABI_MINOR
#endif

static const eg_plugin plugin = {MAGIC, MAJOR, MINOR, sizeof(eg_plugin), sizeof(eg_node_type), sizeof(eg_host),
                                 "broken", "0.0.1", "deliberately broken", 1, types};

#if BROKEN_CASE == 5
extern int evalgraph_symbol_that_does_not_exist(void);
EG_EXPORT int use_missing(void) { return evalgraph_symbol_that_does_not_exist(); }
#endif

#if BROKEN_CASE == 6
EG_EXPORT const eg_plugin *evalgraph_plugin_v2(void) { return &plugin; }
#else
EG_EXPORT const eg_plugin *evalgraph_plugin_v1(void) { return &plugin; }
#endif
