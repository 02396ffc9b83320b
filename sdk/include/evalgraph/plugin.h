/*
 * evalgraph plugin SDK — the stable C ABI.
 *
 * This is the one header a plugin compiles against. It is plain C (C99, -pedantic clean) so that a plugin
 * built with any compiler loads into the host. Rules that keep it stable:
 *   - Every struct begins with `struct_size`; structs only ever grow at their end. A reader checks
 *     struct_size before touching a member that was added in a later minor version.
 *   - No C++ type, STL object or exception crosses the boundary. Data crosses as UTF-8 JSON text.
 *   - Memory is freed by whoever allocated it: a buffer handed over carries its own release callback
 *     (as in Arrow's C data interface). The receiver calls `release` exactly once when done.
 *   - Errors are status codes plus a message in the output buffer. EG_RETRY asks the host to retry the
 *     call later; the host owns backoff.
 *
 * ABI versioning: a plugin built for ABI major M and minor m loads into a host with the same major M and a
 * minor >= m. The entry symbol carries the major version in its name (EG_ENTRY_SYMBOL). A minor version only
 * appends members at the end of structs, so a plugin built for 1.0 keeps loading into every 1.x host, while a
 * plugin built for 1.1 is refused by a 1.0 host (it could call a service that host lacks). Even so, read a
 * member added in a later minor version only when host->struct_size covers it (the C++ Host does), so that a
 * table shorter than the plugin expects is never read past its end.
 *   1.0  the first stable ABI.
 *   1.1  eg_host.run_info: what the run has done so far (records, failures, LLM usage per provider).
 *   1.2  eg_node_type.describe: ports, outputs and parameters known only from a node's own parameters.
 *   1.3  eg_node_type.outputs: each output's type and which direction is better (for expect: and compare).
 */
#ifndef EVALGRAPH_PLUGIN_H
#define EVALGRAPH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EG_MAGIC 0x4556414CU /* "EVAL" */
#define EG_ABI_MAJOR 1
#define EG_ABI_MINOR 3
#define EG_ENTRY_SYMBOL "evalgraph_plugin_v1"

#if defined(_WIN32)
#define EG_EXPORT __declspec(dllexport)
#else
#define EG_EXPORT __attribute__((visibility("default")))
#endif

/* ---- status codes ------------------------------------------------------------------------------------ */
typedef enum eg_status {
  EG_OK = 0,
  EG_ERROR = 1,         /* the call failed; the message says why. The record's node fails. */
  EG_INVALID_INPUT = 2, /* the input does not fit what the node needs (missing field, wrong type). */
  EG_RETRY = 3,         /* transient failure: the host may call again after a backoff. */
  EG_UNSUPPORTED = 4,   /* a host service is not available (e.g. no LLM provider configured). */
  EG_CANCELLED = 5      /* the run is being stopped. */
} eg_status;

/* ---- owned buffers ----------------------------------------------------------------------------------- */
/* A byte buffer (normally UTF-8 JSON text) owned by its producer. The consumer calls release(buf) once. */
typedef struct eg_buffer {
  const char *data;
  size_t size;
  void (*release)(struct eg_buffer *self); /* NULL when empty or already released */
  void *private_data;
} eg_buffer;

/* Dense embedding vectors, row-major: vector i is data[i*dim .. i*dim+dim). Owned by the host. */
typedef struct eg_embeddings {
  size_t struct_size;
  size_t count;
  size_t dim;
  const float *data;
  const char *model_id; /* e.g. "tfidf-v1" or "openai:text-embedding-3-small"; valid until release */
  void (*release)(struct eg_embeddings *self);
  void *private_data;
} eg_embeddings;

/* ---- host services ----------------------------------------------------------------------------------- */
typedef enum eg_log_level { EG_LOG_DEBUG = 0, EG_LOG_INFO = 1, EG_LOG_WARN = 2, EG_LOG_ERROR = 3 } eg_log_level;

/* Opaque handle for one call of a node on one record (or one group). Plugins pass it back to host
 * services so that the host can attribute LLM calls, cache keys (the replication index is part of them),
 * cancellation and log lines to the right record. Valid only during the call it was passed to. */
typedef struct eg_call eg_call;

typedef struct eg_host {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  void *host_data; /* host-private */

  void (*log)(const struct eg_host *host, eg_call *call, eg_log_level level, const char *message);
  /* Non-zero when the run is being stopped; long-running plugins should check it. */
  int (*is_cancelled)(const struct eg_host *host, eg_call *call);
  /* Looks up a named secret (e.g. a provider's API key). The value is never logged by the host. */
  eg_status (*get_secret)(const struct eg_host *host, const char *name, eg_buffer *value_out);

  /* One OpenAI-compatible chat completion. `provider` names a provider of the pipeline (NULL: the
   * pipeline's default). request_json is the body of /chat/completions without "model" (the provider
   * sets it). On EG_OK, response_out holds the server's JSON response; otherwise an error message.
   * Caching, retries, rate limits and concurrency are the host's business. */
  eg_status (*chat)(const struct eg_host *host, eg_call *call, const char *provider, const char *request_json,
                    size_t request_len, eg_buffer *response_out);
  /* Many chat completions in flight at once. requests_json is a JSON array of request bodies; the
   * response is a JSON array of the same length whose items are {"ok":true,"response":{...}} or
   * {"ok":false,"error":"..."}. Returns EG_OK when the batch itself could be run. */
  eg_status (*chat_batch)(const struct eg_host *host, eg_call *call, const char *provider, const char *requests_json,
                          size_t requests_len, eg_buffer *responses_out);
  /* Embeds n texts with the named embedding provider (NULL: the pipeline's default, offline TF-IDF).
   * Vectors of one call are comparable with each other; compare across calls only when model_id says
   * the model is context-free (every model but the TF-IDF default). On error, error_out holds a message. */
  eg_status (*embed)(const struct eg_host *host, eg_call *call, const char *provider, const char *const *texts,
                     const size_t *lengths, size_t n, eg_embeddings *out, eg_buffer *error_out);

  /* ---- ABI 1.1 (present when struct_size covers it) ---- */
  /* What the run has done so far, as a JSON object in `out`:
   *   {"records": n, "failed_records": n, "llm": {"<provider>": {"calls", "cache_hits", "cache_misses",
   *    "merged", "http_requests", "retries", "errors", "malformed_responses", "prompt_tokens",
   *    "completion_tokens", "latency_total_s", "latency_mean_s"}, ...}}
   * "llm" is the LLM usage as run.json reports it ({} when the pipeline declares no provider; a merged run
   * reports its shards' usage summed). Counts grow while the run goes; a sink's finish() sees the final ones.
   * Callable from any thread; `call` may be NULL. */
  eg_status (*run_info)(const struct eg_host *host, eg_call *call, eg_buffer *out);
} eg_host;

/* ---- node types -------------------------------------------------------------------------------------- */
typedef enum eg_node_kind {
  EG_KIND_OPERATOR = 1,  /* computes scores from fields of a record */
  EG_KIND_JUDGE = 2,     /* asks an LLM judge about a record */
  EG_KIND_INDEX = 3,     /* a measure f(original, transformed) -> number */
  EG_KIND_TRANSFORM = 4, /* produces new text (an LLM, a chatbot endpoint, a column) */
  EG_KIND_SINK = 5       /* receives every finished record, in input order, and writes outputs */
} eg_node_kind;

enum {
  EG_FLAG_THREAD_SAFE = 1u << 0, /* one instance may process several records at once */
  EG_FLAG_SEQUENCE = 1u << 1,    /* process() receives all records of a group, ordered, as a JSON array */
  EG_FLAG_USES_LLM = 1u << 2,    /* calls host->chat / chat_batch */
  EG_FLAG_USES_EMBEDDINGS = 1u << 3
};

/* One node type a library offers. Lifecycle: create() once per pipeline node, process() per record (or per
 * group for EG_FLAG_SEQUENCE, or per finished record for sinks), finish() once at the end, destroy().
 *
 * process() input: a JSON object with one member per port the node reads (ports named in `reads` and
 * `reads_optional`; optional ones may be absent), plus "_meta": {"record_index", "replication", ...}.
 * For sequence nodes: a JSON array of such objects, ordered. For sinks: the whole finished record.
 * process() output: a JSON object with the fields the node writes (sequence nodes: an array of objects,
 * one per input, same order). Sinks may leave the output empty.
 * finish() output (optional, may be left empty): a JSON object summarising what the node did; sinks list
 * the files they wrote as {"files": [...]}. */
typedef struct eg_node_type {
  size_t struct_size;
  eg_node_kind kind;
  const char *name;                 /* unique across all loaded plugins, e.g. "ksodi.s0" */
  const char *description;          /* one line */
  const char *params_schema;        /* JSON Schema (draft 7 subset) of the `with:` parameters */
  const char *const *reads;         /* required input ports, NULL-terminated (may be NULL) */
  const char *const *reads_optional; /* optional input ports, NULL-terminated (may be NULL) */
  const char *const *writes;        /* output fields, NULL-terminated; "*" = decided by parameters */
  uint32_t flags;

  /* params_json: the node's `with:` (validated against params_schema, defaults not filled in), plus for
   * sinks "_output_dir". On failure, return non-OK and put a message in error_out. */
  eg_status (*create)(const eg_host *host, const char *params_json, void **instance_out, eg_buffer *error_out);
  void (*destroy)(void *instance);
  eg_status (*process)(void *instance, eg_call *call, const char *input_json, size_t input_len, eg_buffer *out);
  eg_status (*finish)(void *instance, eg_call *call, eg_buffer *out); /* may be NULL */

  /* ---- ABI 1.2 (read only when the plugin's node_type_size covers it and its abi_minor >= 2) ---- */
  /* May be NULL. For a node type whose ports, outputs, flags or parameters are known only from a node's own
   * parameters: the host calls it once per pipeline node while it checks the pipeline (`evalgraph validate`
   * too), before create(). params_json: the node's `with:` plus "_pipeline_dir", "_inputs" (the ports the
   * pipeline maps, an array of names) and "_columns" (the dataset's columns). On EG_OK, `out` holds
   *   {"reads": [...], "reads_optional": [...], "writes": [...], "flags": n, "params_schema": {...},
   *    "info": {...}}
   * which replaces, for that node only, the type's reads, reads_optional, writes, flags and params_schema
   * (the host checks `with:` against that schema); "info" (any JSON) is recorded wherever the host describes
   * the node (run.json, the report). On a problem, return EG_INVALID_INPUT with
   *   {"errors": [{"param": "<the with: key it concerns, or \"\">", "message": "..."}]}
   * (or a plain message) in `out`; the host reports each at the parameter's line. */
  eg_status (*describe)(const char *params_json, size_t params_len, eg_buffer *out);

  /* ---- ABI 1.3 (read only when the plugin's node_type_size covers it and its abi_minor >= 3) ---- */
  /* May be NULL. A JSON object naming some or all of `writes` with what the host cannot guess:
   *   {"O0": {"type": "number", "better": "higher"}, "not_interpretable": {"type": "boolean"}}
   * "type": number | integer | boolean | string | array | object (expect: refuses a stat the type cannot
   * take, e.g. the mean of a string); "better": higher | lower (compare --fail-if-worse calls a change worse in
   * that direction; higher when not said). describe() may answer "outputs" in the same form for one node. */
  const char *outputs;
} eg_node_type;

/* The size of eg_node_type in ABI 1.0 and 1.1 (before describe): the smallest node_type_size a host accepts. */
#define EG_NODE_TYPE_SIZE_1_0 (offsetof(eg_node_type, describe))

/* ---- the library descriptor -------------------------------------------------------------------------- */
typedef struct eg_plugin {
  uint32_t magic; /* EG_MAGIC */
  uint16_t abi_major;
  uint16_t abi_minor;
  size_t struct_size;    /* sizeof(eg_plugin) as the plugin was built */
  size_t node_type_size; /* sizeof(eg_node_type) as the plugin was built */
  size_t host_size;      /* sizeof(eg_host) the plugin was built against */
  const char *name;
  const char *version;
  const char *description;
  size_t node_type_count;
  const eg_node_type *node_types;
} eg_plugin;

/* The one exported entry of a plugin library: `const eg_plugin *evalgraph_plugin_v1(void);` */
typedef const eg_plugin *(*eg_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* EVALGRAPH_PLUGIN_H */
