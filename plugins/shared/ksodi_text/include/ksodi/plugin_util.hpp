// Small helpers shared by the KSODI plugin glue (header-only; uses the SDK's plugin.hpp).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "evalgraph/input.hpp"
#include "evalgraph/json_bounded.hpp"
#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/embed.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

// An EmbedFn that calls the host's embedding service (one host call per invocation).
inline EmbedFn host_embedder(const evalgraph::Host &host, evalgraph::Call &call, const std::optional<std::string> &provider) {
  return [&host, &call, &provider](const std::vector<std::string_view> &texts) {
    evalgraph::Embeddings e = host.embed(call, texts, provider ? provider->c_str() : nullptr);
    if (e.dim == 0 || e.data.size() != texts.size() * e.dim)
      throw std::runtime_error("embedding service returned " + std::to_string(e.data.size()) + " values (dim " +
                               std::to_string(e.dim) + ") for " + std::to_string(texts.size()) + " texts");
    EmbedResult r;
    r.model_id = std::move(e.model_id);
    r.dim = e.dim;
    r.data = std::move(e.data);
    return r;
  };
}

// The output text of a node built as a nlohmann::json (the sequence nodes), as the SDK's Node adapter writes it.
inline std::string dump_output(const nlohmann::json &out) {
  return out.is_null() ? std::string() : out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// What the host passes every node as `_limits`: read by the SDK.
using evalgraph::input_limits;
using evalgraph::InputLimits;

// Refuses (InputError) an answer that splits into more than `limit` sentences: memory and time grow with the
// sentences (~1.6 KB each in O0), so one answer of a million short sentences must fail alone, not take the run
// down. A count of the bytes that can end a unit (. ! ? … and line ends) bounds the sentences from above, so
// only an answer near the limit is split to count exactly.
inline void check_sentences(std::string_view answer, std::size_t limit, const char *node) {
  auto ends_unit = [](char c) {
    return c == '.' || c == '!' || c == '?' || c == '\n' || static_cast<unsigned char>(c) == 0xE2;
  };
  std::size_t bound = 1, cut = answer.size();
  for (std::size_t i = 0; i < answer.size(); ++i) {
    if (!ends_unit(answer[i])) continue;
    if (++bound == 2 * limit + 2) cut = i + 1;  // a prefix that surely holds more than `limit` units if the
  }                                             // answer is made of short sentences
  if (bound <= limit) return;
  auto refuse = [&](const std::string &count) {
    throw evalgraph::InputError(std::string(node) + ": the answer has " + count +
                                " sentences, over the limit limits.sentences_per_answer = " + std::to_string(limit) +
                                "; shorten the answer, or raise limits.sentences_per_answer in the pipeline");
  };
  // Counted on the prefix first, so a million short sentences are not all split to be refused.
  if (cut < answer.size()) {
    const std::size_t n = text::split_sentences(answer.substr(0, cut)).size();
    if (n > limit) refuse("more than " + std::to_string(limit));
  }
  const std::size_t n = text::split_sentences(answer).size();
  if (n > limit) refuse(std::to_string(n));
}

// What the KSODI operator nodes that call the host's embedding service share: the host, the pipeline's embedding
// provider (null = host default), the input limits, the host-backed EmbedFn and reading the answer.
class EmbeddingNode : public evalgraph::RawNode {
 protected:
  EmbeddingNode(const evalgraph::Host &host, const nlohmann::json &params, std::optional<std::string> provider)
      : host_(host), provider_(std::move(provider)), limits_(input_limits(params)) {}
  EmbedFn embedder(evalgraph::Call &call) const { return host_embedder(host_, call, provider_); }
  // The assistant text in port `port` of a record, refused (InputError) over the sentence limit.
  std::string answer(const evalgraph::Record &in, evalgraph::Port port) const {
    std::string text = in.required_text(port, "the assistant text");
    check_sentences(text, limits_.sentences_per_answer, in.node());
    return text;
  }

  evalgraph::Host host_;
  std::optional<std::string> provider_;
  InputLimits limits_;
};

// The parameters of a KSODI-Full node: its own (P), those of its embedded standard operator as given (G; the
// node resolves them into P's) and the pipeline's embedding provider (null = host default).
template <class P, class G> struct SequenceConfig : P {
  G standard;
  std::optional<std::string> embedding_provider;
};

// What the KSODI-Full sequence nodes (ksodi.s_t, ksodi.k_t, ksodi.o_t) share besides: their own parameters P
// (p_) and the embedding provider, taken from their SequenceConfig; reading the conversation (its turns' records,
// and whether it came as a group or as one record); one input member of every turn (its JSON as it came); the
// provider as JSON; and the output text for a group (an array) or a lone record (its object).
template <class P> class SequenceNode : public EmbeddingNode {
 protected:
  // The node resolves the embedded standard operator's parameters (c.standard) into p_ itself.
  template <class G>
  SequenceNode(const evalgraph::Host &host, const SequenceConfig<P, G> &c, const nlohmann::json &params)
      : EmbeddingNode(host, params, c.embedding_provider), p_(c) {}
  struct Conversation {
    std::vector<evalgraph::Record> turns;
    bool group = false;
  };
  // The turns, each a Record of the node type's ports.
  static Conversation read(std::string_view input, const evalgraph::NodeSpec &spec) {
    Conversation c;
    c.turns = evalgraph::read_sequence(input, spec, &c.group);
    return c;
  }
  nlohmann::json provider_json() const { return provider_ ? nlohmann::json(*provider_) : nlohmann::json(nullptr); }
  static std::vector<nlohmann::json> column(const std::vector<evalgraph::Record> &records, std::size_t member) {
    std::vector<nlohmann::json> values;
    for (const auto &in : records) values.push_back(in.json(member));
    return values;
  }
  static std::string output(const nlohmann::json &out, const Conversation &c) {
    return dump_output(c.group ? out : out.at(0));
  }

  P p_;
};

// The parameter list of a KSODI-Full node with a SequenceConfig C: its own `own`, then the embedded standard
// operator's, declared by `standard`, as member `name` ("s0": ksodi.s0's), the embedding provider (used for
// `provider_use`) and `more`.
template <class C, class G>
std::vector<evalgraph::Param<C>> sequence_params(std::vector<evalgraph::Param<C>> own, const char *name,
                                                 const evalgraph::Params<G> &standard, const char *provider_use,
                                                 std::vector<evalgraph::Param<C>> more = {}) {
  const std::string standard_text =
      std::string("Parameters of the embedded standard operator ksodi.") + name + ", with its defaults";
  own.push_back(evalgraph::param<C>(&C::standard, name, standard_text.c_str(), standard));
  const std::string provider_text =
      std::string("Embedding provider for ") + provider_use + "; null = host default (offline TF-IDF)";
  own.push_back(evalgraph::param<C>(&C::embedding_provider, "embedding_provider", provider_text.c_str()).nullable());
  for (auto &p : more) own.push_back(std::move(p));
  return own;
}

// The weight of one Δ term of a KSODI-Full operator: "Weight of <term>", a number in [0, 10]. S is the node's
// parameter struct (the member may be of a base).
template <class S, class B> evalgraph::Param<S> weight_param(double B::*member, const char *name, const char *term) {
  return evalgraph::param<S>(member, name, ("Weight of " + std::string(term)).c_str()).range(0, 10);
}

// The flags of a KSODI-Full sequence node: an operator that is given a whole conversation at once and may call
// the host's embedding service.
constexpr uint32_t kSequenceFlags = EG_FLAG_THREAD_SAFE | EG_FLAG_SEQUENCE | EG_FLAG_USES_EMBEDDINGS;

}  // namespace ksodi
