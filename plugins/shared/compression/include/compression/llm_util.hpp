#pragma once
// Small helpers shared by the compression plugins: chat request bodies, reading the answer text, the
// strict JSON-answer parser, parameters, and a seeded, platform-independent shuffle.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "evalgraph/plugin.hpp"

namespace compression {

using json = nlohmann::json;

// {"messages":[system, user], "temperature": t[, "max_tokens": n]} (max_tokens <= 0: not sent).
json chat_request(const std::string &system, const std::string &user, double temperature, int max_tokens);
// choices[0].message.content of a chat completion; throws std::runtime_error when there is none.
std::string chat_content(const json &response);

// One answer of a chat_batch call: its text (ok), or the error that took its place: the host's, or why the
// response holds no text.
struct BatchAnswer {
  bool ok = false;
  std::string text;  // the answer's text, or the error
};
// Sends `requests` (chat_request bodies) in one chat_batch call to `provider` ("": the pipeline's default) and
// returns the answers in request order (no requests: no call); std::runtime_error when the host returns another number of answers.
std::vector<BatchAnswer> chat_batch_texts(const evalgraph::Host &host, evalgraph::Call &call, const std::string &provider,
                                          const json &requests);

// A node whose work on its input is two halves around one chat_batch call: Work(input, options) computes the
// requests(), Work::output(answers) the node's output (compression.judge's Grading, compression.probes'
// SessionProbes). `options(config)` checks the node's parameters, as the SDK parsed them with its Params<Config>,
// and makes the Options (which have the provider); without one, the Config is the Options. A sequence node
// (Sequence) hands Work a session's records as one array.
template <class Config> const Config &as_parsed(const Config &c) { return c; }
template <class Work, class Config, auto options = &as_parsed<Config>, bool Sequence = false>
class BatchNode : public evalgraph::Node {
 public:
  BatchNode(const evalgraph::Host &host, const Config &c) : host_(host), o_(options(c)) {}
  json process(evalgraph::Call &call, const json &in) override {
    if constexpr (Sequence) return process_sequence(call, json::array({in})).at(0);
    else return run(call, in);
  }
  json process_sequence(evalgraph::Call &call, const json &records) override {
    if constexpr (Sequence) return run(call, records);
    else return evalgraph::Node::process_sequence(call, records);
  }

 private:
  json run(evalgraph::Call &call, const json &in) {
    Work work(in, o_);
    return work.output(chat_batch_texts(host_, call, o_.provider, work.requests()));
  }
  evalgraph::Host host_;
  const std::decay_t<decltype(options(std::declval<const Config &>()))> o_;
};

// The answer parsed as JSON when the whole answer (trimmed) is one JSON value, or when it is exactly one
// fenced code block (```json ... ``` or ``` ... ```) holding one. Anything else: nullopt.
// Answers nested deeper than this are no JSON answer (what the judge asks for is a few levels deep).
constexpr int kMaxAnswerDepth = 32;
std::optional<json> parse_json_answer(const std::string &text);

// 64-bit FNV-1a and SplitMix64: fixed algorithms, so a seeded order is the same on every platform.
std::uint64_t fnv1a64(const std::string &s, std::uint64_t h = 1469598103934665603ULL);
std::uint64_t splitmix64(std::uint64_t &state);
// A permutation of 0..n-1 by Fisher–Yates driven by SplitMix64 seeded with `seed`.
std::vector<std::size_t> seeded_permutation(std::size_t n, std::uint64_t seed);

}  // namespace compression
