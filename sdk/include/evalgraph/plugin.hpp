// evalgraph plugin SDK — header-only C++ layer over plugin.h.
//
// Write a class derived from evalgraph::Node, declare its node type once with an evalgraph::NodeSpec (by field
// name), and list it in EVALGRAPH_PLUGIN(...). This layer turns exceptions into status codes at the boundary,
// parses the input JSON for you (nlohmann::json) and hands results back through the C ABI with a release
// callback. The node's parameters are declared once (NodeSpec::params = kParams, an evalgraph::Params<S>) and
// reach its constructor parsed: T(const Host&, const S&) or T(const Host&, const S&, const json& params)
// (node_type, below). The LLM helpers (prompt templates, a chat answer's text) are in evalgraph/llm.hpp.
//
//   const evalgraph::NodeSpec kEcho{.name = "example.echo", .description = "Echoes text", .reads = {"text"},
//                                   .writes = {"text"}, .flags = EG_FLAG_THREAD_SAFE,
//                                   .params = evalgraph::no_params()};
//   class Echo : public evalgraph::Node {
//    public:
//     Echo(const evalgraph::Host&, const evalgraph::NoParams&) {}
//     nlohmann::json process(evalgraph::Call&, const nlohmann::json& in) override {
//       return {{"text", in.at("text")}};
//     }
//   };
//   EVALGRAPH_PLUGIN("example", "An example", evalgraph::node_type<Echo>(kEcho))
#ifndef EVALGRAPH_PLUGIN_HPP
#define EVALGRAPH_PLUGIN_HPP

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "evalgraph/json_bounded.hpp"
#include "evalgraph/json_writer.hpp"
#include "evalgraph/params.hpp"
#include "evalgraph/plugin.h"

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#endif

namespace evalgraph {

using json = nlohmann::json;

// Throw from a node to ask the host to retry the call later (the host owns the backoff).
struct RetryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Throw when the input does not fit (missing or mistyped field).
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Thrown by Host services when the host answers with a non-OK status.
struct HostError : std::runtime_error {
  HostError(eg_status s, const std::string &msg) : std::runtime_error(msg), status(s) {}
  eg_status status;
};

// Inputs, parameters and host answers nested deeper than this are refused before a node sees them (the
// engine's records stop at its limits.nesting_depth, at most 512; a node's input adds a level or two).
constexpr int kMaxInputDepth = 1024;

namespace detail {
// nlohmann's message without its "[json.exception.type_error.302] " prefix: what a node's user reads.
inline std::string json_error_words(const nlohmann::json::exception &e) {
  std::string w = e.what();
  if (!w.empty() && w[0] == '[') {
    std::size_t close = w.find("] ");
    if (close != std::string::npos) w.erase(0, close + 2);
  }
  return "input: " + w;
}
// Parses JSON text the host handed over (bounded nesting; a problem is an InputError in our words).
inline json parse_input(std::string_view text, const char *what) {
  json j;
  std::string why;
  if (!parse_bounded(text, j, kMaxInputDepth, &why)) throw InputError(std::string(what) + " is " + why);
  return j;
}
// A buffer that owns a std::string and frees it through the release callback.
inline void release_string_buffer(eg_buffer *b) {
  delete static_cast<std::string *>(b->private_data);
  b->data = nullptr;
  b->size = 0;
  b->release = nullptr;
  b->private_data = nullptr;
}
inline void fill_buffer(eg_buffer *b, std::string s) {
  if (b == nullptr) return;
  auto *owned = new std::string(std::move(s));
  b->data = owned->data();
  b->size = owned->size();
  b->private_data = owned;
  b->release = &release_string_buffer;
}
inline std::string take_buffer(eg_buffer &b) {
  std::string s = (b.data != nullptr) ? std::string(b.data, b.size) : std::string();
  if (b.release != nullptr) b.release(&b);
  return s;
}
template <class F> eg_status guard(eg_buffer *out, F &&f) noexcept {
  try {
    return f();
  } catch (const RetryError &e) {
    fill_buffer(out, e.what());
    return EG_RETRY;
  } catch (const InputError &e) {
    fill_buffer(out, e.what());
    return EG_INVALID_INPUT;
  } catch (const HostError &e) {
    fill_buffer(out, e.what());
    return e.status == EG_CANCELLED ? EG_CANCELLED : EG_ERROR;
  } catch (const nlohmann::json::exception &e) {  // e.g. in.at("text") on an input without it
    fill_buffer(out, json_error_words(e));
    return EG_INVALID_INPUT;
  } catch (const std::exception &e) {
    fill_buffer(out, e.what());
    return EG_ERROR;
  } catch (...) {
    fill_buffer(out, "unknown exception in plugin");
    return EG_ERROR;
  }
}
}  // namespace detail

// Embedding vectors returned by the host, copied out of the ABI buffer.
struct Embeddings {
  std::string model_id;
  std::size_t dim = 0;
  std::vector<float> data;  // row-major, count * dim
  std::size_t count() const { return dim == 0 ? 0 : data.size() / dim; }
  const float *row(std::size_t i) const { return data.data() + i * dim; }
};

// Per-call handle: pass it to host services so the host can attribute work to the record.
class Call {
 public:
  explicit Call(eg_call *c) : c_(c) {}
  eg_call *raw() const { return c_; }

 private:
  eg_call *c_;
};

// The host's services, as C++.
class Host {
 public:
  explicit Host(const eg_host *h) : h_(h) {}
  const eg_host *raw() const { return h_; }

  void log(eg_log_level level, const std::string &msg, Call *call = nullptr) const {
    if (h_ != nullptr && h_->log != nullptr) h_->log(h_, call ? call->raw() : nullptr, level, msg.c_str());
  }
  bool cancelled(Call &call) const { return h_ != nullptr && h_->is_cancelled != nullptr && h_->is_cancelled(h_, call.raw()) != 0; }

  std::string secret(const std::string &name) const {
    eg_buffer b{};
    if (h_ == nullptr || h_->get_secret == nullptr) throw HostError(EG_UNSUPPORTED, "host offers no secrets");
    eg_status s = h_->get_secret(h_, name.c_str(), &b);
    std::string v = detail::take_buffer(b);
    if (s != EG_OK) throw HostError(s, v);
    return v;
  }

  // One chat completion; returns the parsed response. Throws HostError on failure.
  json chat(Call &call, const json &request, const char *provider = nullptr) const {
    return chat_call(h_ != nullptr ? h_->chat : nullptr, call, request, provider);
  }

  // Many chat completions at once; each item is {"ok":true,"response":...} or {"ok":false,"error":...}.
  json chat_batch(Call &call, const json &requests, const char *provider = nullptr) const {
    return chat_call(h_ != nullptr ? h_->chat_batch : nullptr, call, requests, provider);
  }

  Embeddings embed(Call &call, const std::vector<std::string_view> &texts, const char *provider = nullptr) const {
    if (h_ == nullptr || h_->embed == nullptr) throw HostError(EG_UNSUPPORTED, "host offers no embeddings");
    std::vector<const char *> ptrs;
    std::vector<size_t> lens;
    ptrs.reserve(texts.size());
    lens.reserve(texts.size());
    for (auto t : texts) {
      ptrs.push_back(t.data());
      lens.push_back(t.size());
    }
    eg_embeddings e{};
    e.struct_size = sizeof(e);
    eg_buffer err{};
    eg_status s = h_->embed(h_, call.raw(), provider, ptrs.data(), lens.data(), texts.size(), &e, &err);
    if (s != EG_OK) {
      std::string msg = detail::take_buffer(err);
      if (e.release != nullptr) e.release(&e);
      throw HostError(s, msg);
    }
    Embeddings out;
    out.model_id = e.model_id != nullptr ? e.model_id : "";
    out.dim = e.dim;
    if (e.data != nullptr) out.data.assign(e.data, e.data + e.count * e.dim);
    if (e.release != nullptr) e.release(&e);
    return out;
  }

  // Whether the host's table has a service that was added in a later ABI minor version (an older host's
  // table ends before it). Pass the member's offset, e.g. offsetof(eg_host, run_info).
  bool offers(std::size_t member_offset) const {
    return h_ != nullptr && h_->struct_size >= member_offset + sizeof(void (*)());
  }

  // What the run has done so far (ABI 1.1): {"records", "failed_records", "llm": {"<provider>": {"calls",
  // "cache_hits", "http_requests", "retries", "errors", "prompt_tokens", ...}}}. An empty object when the host
  // is older than 1.1 and has no such service. Throws HostError when the host answers with an error.
  json run_info(Call *call = nullptr) const {
    if (!offers(offsetof(eg_host, run_info)) || h_->abi_minor < 1 || h_->run_info == nullptr) return json::object();
    eg_buffer b{};
    eg_status s = h_->run_info(h_, call != nullptr ? call->raw() : nullptr, &b);
    std::string out = detail::take_buffer(b);
    if (s != EG_OK) throw HostError(s, out);
    json j = out.empty() ? json::object() : host_json(out);
    return j.is_object() ? j : json::object();
  }

 private:
  // chat and chat_batch: the request as JSON text in, the host's answer parsed out.
  using ChatFn = eg_status (*)(const eg_host *, eg_call *, const char *, const char *, size_t, eg_buffer *);
  json chat_call(ChatFn fn, Call &call, const json &request, const char *provider) const {
    if (fn == nullptr) throw HostError(EG_UNSUPPORTED, "host offers no chat service");
    const std::string body = dump_json(request);  // (= request.dump(), faster)
    eg_buffer b{};
    const eg_status s = fn(h_, call.raw(), provider, body.data(), body.size(), &b);
    std::string out = detail::take_buffer(b);
    if (s != EG_OK) throw HostError(s, out);
    return host_json(out);
  }

  static json host_json(const std::string &text) {
    json j;
    std::string why;
    if (!parse_bounded(text, j, kMaxInputDepth, &why)) throw HostError(EG_ERROR, "the host's answer is " + why);
    return j;
  }

  const eg_host *h_;
};

// Base class of every node. Override what your kind needs:
//   operators, judges, indices, transforms: process() (or process_sequence() with EG_FLAG_SEQUENCE);
//   sinks: process() receives each finished record (return nullptr), finish() closes the files.
class Node {
 public:
  virtual ~Node() = default;
  virtual json process(Call &, const json &) { throw std::logic_error("process() not implemented"); }
  virtual json process_sequence(Call &call, const json &records) {
    json out = json::array();
    for (const auto &r : records) out.push_back(process(call, r));
    return out;
  }
  virtual json finish(Call &) { return nullptr; }
};

// A node that takes its input as the JSON text the host sent, without parsing it (e.g. a sink that writes
// records as they come). process_raw returns the output JSON text ("" for none).
class RawNode {
 public:
  virtual ~RawNode() = default;
  virtual std::string process_raw(Call &call, std::string_view input) = 0;
  virtual json finish(Call &) { return nullptr; }
};

// One output a node type writes: its name and, optionally, what the host cannot guess (ABI 1.3): its type
// ("number", "integer", "boolean", "string", "array", "object") and which direction is better ("higher" or
// "lower"; higher when not said). A plain "name" converts to an Output.
struct Output {
  Output(const char *output_name, const char *output_type = nullptr, const char *better_direction = nullptr)
      : name(output_name), type(output_type), better(better_direction) {}
  const char *name;
  const char *type;
  const char *better;
};

// One input port of a node type, resolved once from its name (NodeSpec::port, in the node's constructor): its
// index among the ports a Record reads (reads, then reads_optional) and its name. Converts to that index.
struct Port {
  std::size_t index = 0;
  const char *name = "";
  constexpr operator std::size_t() const noexcept { return index; }
};

// The declared parameters of a node type (NodeSpec::params = kParams): a reference to any evalgraph::Params<S>,
// which must outlive the declaration (a namespace-scope constant does).
class ParamsRef {
 public:
  ParamsRef() = default;
  ParamsRef(const ParamsSchema &p) : p_(&p) {}  // NOLINT(google-explicit-constructor): `.params = kParams`
  ParamsRef(const ParamsSchema &&) = delete;    // a temporary would be gone before the node type is built
  const ParamsSchema *get() const { return p_; }

 private:
  const ParamsSchema *p_ = nullptr;
};

// ABI 1.2's eg_node_type.describe: what one node reads, writes and takes, from its own parameters (plugin.h).
using DescribeFn = eg_status (*)(const char *params_json, size_t params_len, eg_buffer *out);

// What a node type declares about itself, written once, by field name (C++20 designated initialisers, in this
// order; leave out what you do not need):
//   const evalgraph::NodeSpec kSpec{.kind = EG_KIND_OPERATOR, .name = "acme.node", .description = "one line",
//       .reads = {"answer"}, .reads_optional = {"docs"},
//       .writes = {{"score", "number"}, {"errors", "integer", "lower"}, "details"}, .flags = EG_FLAG_THREAD_SAFE,
//       .params = kParams};
// The node reads its name (kSpec.name) and ports (kSpec.port("docs"), evalgraph::Record(text, kSpec)) from it.
// Mirrors eg_node_type: `params` gives its params_schema (the Params' JSON Schema, whose description is then
// `description` unless the Params were declared with one of their own), the typed `writes` its outputs (the
// JSON of ABI 1.3). `describe` (ABI 1.2, may be left out) describes each node from its parameters.
struct NodeSpec {
  eg_node_kind kind = EG_KIND_OPERATOR;
  const char *name = nullptr;
  const char *description = "";
  std::vector<const char *> reads = {};
  std::vector<const char *> reads_optional = {};
  std::vector<Output> writes = {};
  uint32_t flags = 0;
  ParamsRef params = {};
  DescribeFn describe = nullptr;

  // The port `port_name` (one of reads, then reads_optional). Resolve ports once, in the node's constructor, and
  // read with the Port: no lookup per record. A name the spec does not declare: std::logic_error (the node's
  // create() fails with that message).
  Port port(std::string_view port_name) const {
    std::size_t i = 0;
    for (const auto *list : {&reads, &reads_optional})
      for (const char *r : *list) {
        if (port_name == r) return Port{i, r};
        ++i;
      }
    throw std::logic_error(std::string(name != nullptr ? name : "node") + ": port '" + std::string(port_name) +
                           "' is not declared in the node type's reads or reads_optional");
  }
};

// What the host passes every node as `_limits` (the pipeline's `limits:` section; docs/concepts.md "Limits and
// hostile data"), with these defaults where a host passes none.
struct InputLimits {
  std::size_t sentences_per_answer = 10000;  // an answer that splits into more sentences is refused
  int nesting_depth = kDefaultNestingDepth;  // JSON in a text port (docs in a CSV cell) nests at most this deep
};
// A limit that is not a positive integer keeps its default; one beyond what its type holds is that type's
// largest value (no limit in practice), never a wrapped one.
inline InputLimits input_limits(const json &params) {
  InputLimits l;
  auto it = params.find("_limits");
  if (it == params.end() || !it->is_object()) return l;
  auto positive = [&](const char *key, unsigned long long max) -> unsigned long long {
    auto v = it->find(key);
    if (v == it->end() || !v->is_number_integer()) return 0;
    if (v->is_number_unsigned()) return std::min(v->get<unsigned long long>(), max);
    const long long x = v->get<long long>();
    return x > 0 ? std::min(static_cast<unsigned long long>(x), max) : 0;
  };
  if (auto s = positive("sentences_per_answer", std::numeric_limits<std::size_t>::max()); s > 0)
    l.sentences_per_answer = static_cast<std::size_t>(s);
  if (auto d = positive("nesting_depth", static_cast<unsigned long long>(std::numeric_limits<int>::max())); d > 0)
    l.nesting_depth = static_cast<int>(d);
  return l;
}

namespace detail {
struct NodeTypeStorage {
  NodeSpec spec;
  std::vector<const char *> reads, reads_optional, writes;  // NULL-terminated copies
  std::string outputs;                                      // the typed writes as eg_node_type.outputs
  std::string params_schema;                                // NodeSpec::params' schema, with the description
};
inline std::vector<const char *> null_terminated(const std::vector<const char *> &v) {
  std::vector<const char *> r(v);
  r.push_back(nullptr);
  return r;
}

// The name of a type as a reader writes it (demangled where the compiler's runtime can).
inline std::string type_name(const std::type_info &t) {
#if __has_include(<cxxabi.h>)
  int status = 0;
  std::unique_ptr<char, void (*)(void *)> name(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  if (status == 0 && name != nullptr) return name.get();
#endif
  return t.name();
}

// The parameters as the node type's Params parsed them, for a constructor that takes `const S &`: it converts to
// the struct where S (deduced from that parameter) is the struct the Params parse into, and throws
// std::logic_error saying both otherwise (so create() fails with that message).
class ParsedParams {
 public:
  ParsedParams(const ParamsSchema &params, const json &with, const char *node)
      : value_(params.parse_erased(with)), type_(params.struct_type()), node_(node) {}
  template <class S> operator const S &() const {  // NOLINT(google-explicit-constructor): T(host, parsed, p)
    if (typeid(S) != type_)
      throw std::logic_error(std::string(node_) + ": the node's constructor takes " + type_name(typeid(S)) +
                             ", but its NodeSpec's .params parse into " + type_name(type_) +
                             "; declare .params = an evalgraph::Params<" + type_name(typeid(S)) + ">");
    return *static_cast<const S *>(value_.get());
  }

 private:
  std::shared_ptr<const void> value_;
  const std::type_info &type_;
  const char *node_;
};

// How node_type<T> constructs a T: 3 T(const Host &, const S &, const json &params); 2 T(const Host &, const S &).
// The SDK parses `params` with the node type's NodeSpec::params, which must be an evalgraph::Params<S>, and S is
// what the constructor takes.
template <class T> constexpr int constructor_form() {
  if constexpr (std::is_constructible_v<T, const Host &, const ParsedParams &, const json &>)
    return 3;
  else if constexpr (std::is_constructible_v<T, const Host &, const ParsedParams &>) return 2;
  else return -1;
}

template <class T> struct Adapter {
  // For the typed constructor: the node type's Params and name (set by node_type<T>), or why create() must fail.
  static inline const ParamsSchema *declared = nullptr;
  static inline const char *declared_name = "node";
  static inline std::string misdeclared;

  static eg_status create(const eg_host *host, const char *params, void **inst, eg_buffer *err) noexcept {
    return guard(err, [&] {
      json p = (params != nullptr && *params != '\0') ? parse_input(params, "the parameters' JSON") : json::object();
      constexpr int form = constructor_form<T>();
      static_assert(
          form > 0,
          "evalgraph::node_type<T>: T needs, with the struct S of its NodeSpec's "
          "evalgraph::Params<S> (evalgraph::NoParams for no_params()), a constructor "
          "T(const evalgraph::Host &, const S &, const json &params) or T(const evalgraph::Host &, const S &)");
      if (!misdeclared.empty()) throw std::logic_error(misdeclared);
      const ParsedParams config(*declared, p, declared_name);
      if constexpr (form == 3)
        *inst = new T(Host(host), config, p);
      else
        *inst = new T(Host(host), config);
      return EG_OK;
    });
  }
  // Records the node type's Params for the constructor: there must be some (create() checks their struct against
  // the constructor's), and one class declared as several node types must have the same Params in each (create()
  // fails with the reason otherwise).
  static void declare(const NodeSpec &spec) {
    const std::string node = spec.name != nullptr ? spec.name : "node";
    const ParamsSchema *params = spec.params.get();
    if (params == nullptr) {
      misdeclared = node +
                    ": the node's constructor takes its parameters' struct, so its NodeSpec needs .params = "
                    "the evalgraph::Params of that struct (evalgraph::no_params() for none)";
    } else if (declared != nullptr && declared != params) {
      misdeclared = node +
                    ": one node class declared as several node types with different Params; give each "
                    "its own class or the same Params";
    } else {
      declared = params;
      if (spec.name != nullptr) declared_name = spec.name;
    }
  }
  static void destroy(void *inst) noexcept { delete static_cast<T *>(inst); }
  static eg_status process(void *inst, eg_call *c, const char *in, size_t len, eg_buffer *out) noexcept {
    return guard(out, [&] {
      Call call(c);
      auto *node = static_cast<T *>(inst);
      json input = parse_input(std::string_view(in, len), "the input");
      json result = input.is_array() ? node->process_sequence(call, input) : node->process(call, input);
      if (!result.is_null()) fill_buffer(out, result.dump(-1, ' ', false, json::error_handler_t::replace));
      return EG_OK;
    });
  }
  static eg_status finish(void *inst, eg_call *c, eg_buffer *out) noexcept {
    return guard(out, [&] {
      Call call(c);
      json result = static_cast<T *>(inst)->finish(call);
      if (!result.is_null()) fill_buffer(out, result.dump(-1, ' ', false, json::error_handler_t::replace));
      return EG_OK;
    });
  }
};
template <class T> struct RawAdapter : Adapter<T> {
  static eg_status process(void *inst, eg_call *c, const char *in, size_t len, eg_buffer *out) noexcept {
    return guard(out, [&] {
      Call call(c);
      std::string result = static_cast<T *>(inst)->process_raw(call, std::string_view(in, len));
      if (!result.empty()) fill_buffer(out, std::move(result));
      return EG_OK;
    });
  }
};
}  // namespace detail

// Builds the C descriptor of a node type implemented by class T, which derives from Node, or from RawNode to
// receive its input unparsed. spec.params is an evalgraph::Params<S> (evalgraph::no_params(): S is
// evalgraph::NoParams), and T's constructor takes the struct the SDK parsed with it:
//   T(const Host &, const S &, const json &params)  (also the host's `_` keys: input_limits, SinkFiles)
//   T(const Host &, const S &)
// A parse error fails create() with parse()'s message and T is not built; so do Params of another struct than S.
template <class T> eg_node_type node_type(const NodeSpec &spec) {
  // The string arrays must outlive the descriptor: keep them in storage that lives as long as the library.
  static std::vector<std::unique_ptr<detail::NodeTypeStorage>> keep;
  auto st = std::make_unique<detail::NodeTypeStorage>();
  st->spec = spec;
  st->reads = detail::null_terminated(spec.reads);
  st->reads_optional = detail::null_terminated(spec.reads_optional);
  for (const Output &o : spec.writes) st->writes.push_back(o.name);
  st->writes.push_back(nullptr);
  // The typed writes as eg_node_type.outputs (none where no write says its type or direction).
  json typed = json::object();
  for (const Output &o : spec.writes) {
    if (o.type == nullptr && o.better == nullptr) continue;
    json d = json::object();
    if (o.type != nullptr) d["type"] = o.type;
    if (o.better != nullptr) d["better"] = o.better;
    typed[o.name] = std::move(d);
  }
  if (!typed.empty()) st->outputs = typed.dump();
  eg_node_type t{};
  t.struct_size = sizeof(eg_node_type);
  t.kind = spec.kind;
  t.name = spec.name;
  t.description = spec.description;
  if (spec.params.get() != nullptr)
    t.params_schema = (st->params_schema = spec.params.get()->schema_text(spec.description)).c_str();
  t.reads = st->reads.data();
  t.reads_optional = st->reads_optional.data();
  t.writes = st->writes.data();
  t.flags = spec.flags;
  t.outputs = st->outputs.empty() ? nullptr : st->outputs.c_str();
  detail::Adapter<T>::declare(spec);
  t.create = &detail::Adapter<T>::create;
  t.destroy = &detail::Adapter<T>::destroy;
  if constexpr (std::is_base_of_v<RawNode, T>) {
    t.process = &detail::RawAdapter<T>::process;
  } else {
    t.process = &detail::Adapter<T>::process;
  }
  t.finish = &detail::Adapter<T>::finish;
  t.describe = spec.describe;
  keep.push_back(std::move(st));
  return t;
}

}  // namespace evalgraph

// Defines the library's entry point. Arguments: plugin name, description, then one evalgraph::node_type<T>(...)
// per node type. The plugin's version is EVALGRAPH_PLUGIN_VERSION, a string that evalgraph_add_plugin() defines
// from the CMake project's version (or its VERSION argument).
#define EVALGRAPH_PLUGIN(PNAME, PDESC, ...)                         \
  extern "C" EG_EXPORT const eg_plugin *evalgraph_plugin_v1(void) { \
    static const std::vector<eg_node_type> types{__VA_ARGS__};      \
    static const eg_plugin plugin{EG_MAGIC,                         \
                                  EG_ABI_MAJOR,                     \
                                  EG_ABI_MINOR,                     \
                                  sizeof(eg_plugin),                \
                                  sizeof(eg_node_type),             \
                                  sizeof(eg_host),                  \
                                  PNAME,                            \
                                  EVALGRAPH_PLUGIN_VERSION,         \
                                  PDESC,                            \
                                  types.size(),                     \
                                  types.data()};                    \
    return &plugin;                                                 \
  }

#endif  // EVALGRAPH_PLUGIN_HPP
