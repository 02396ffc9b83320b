// The probes of one checkpoint, computed from its history (compression.probes' domain logic, no plugin ABI):
// recall / artifact / continuation probes whose expected answers are read from the structural facts of the
// tool calls, validation of dataset-supplied probes, the decision-probe prompt for the LLM and the parser of
// its answer, the facts summary the node writes beside the probes, and one session's probes (SessionProbes).
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compression/facts.hpp"
#include "compression/llm_params.hpp"
#include "compression/llm_util.hpp"

namespace compression {

// The system prompt of the decision-probe call.
extern const char *const kDecisionSystem;

// One probe object: {"id", "type", "question", "expected", "source"}.
json probe(const std::string &id, const std::string &type, const std::string &q, const std::string &expected,
           const std::string &source);

// Expected answers read from the facts.
std::string artifact_expected(const Facts &f);
std::string continuation_expected(const Facts &f);

// The extracted probes of the requested types ("recall", "artifact", "continuation"), in that order; a recall
// probe asks for the first error if there was one, else for the user's first request, else there is none.
json extracted_probes(const Facts &f, const std::set<std::string> &types);

// The k-th (1-based) probe of the dataset's `probes` column, checked; std::invalid_argument (message prefixed
// with `where`) if it lacks string 'type' / 'question', names an unknown type or an unknown criterion.
json supplied_probe(const json &sp, std::size_t k, const std::string &where);

// The files / first error / open to-dos summary written as the record's `facts`.
json facts_summary(const Facts &f);

// The user prompt asking the LLM for `n` decision questions with answers about `transcript`.
std::string decision_prompt(long long n, const std::string &transcript);

using Decisions = std::vector<std::pair<std::string, std::string>>;  // (question, answer)
// The LLM's answer {"decisions": [{"question", "answer"}...]} (bare or fenced JSON); nullopt if malformed or
// any question or answer is empty after trimming.
std::optional<Decisions> parse_decisions(const std::string &text);

// Appends at most `n` decision probes (ids decision-1...) to `probes`, before the first dataset-supplied one.
void insert_decision_probes(json &probes, const Decisions &decisions, long long n);

// What compression.probes asks for: its parameters.
struct ProbeOptions : LlmRequest {
  std::set<std::string> types;  // recall, artifact, continuation, decision
  long long decision_probes = 1;
  bool only_supplied = false;  // a checkpoint with supplied probes gets no generated ones
  std::size_t max_tool_chars = 300;
};

// One session's probes: its checkpoint records read in order (the history rebuilt span by span), each
// checkpoint's generated and supplied probes, and one decision-probe request per checkpoint that gets them.
// Input that does not fit: evalgraph::InputError. `o` must outlive it.
class SessionProbes {
 public:
  SessionProbes(const json &records, const ProbeOptions &o);
  // The decision-probe requests (chat_request bodies), in checkpoint order.
  const json &requests() const { return requests_; }
  // The records' outputs, once the LLM's `answers` (one per request, in their order) are in; a failed call is
  // a std::runtime_error (the host already retried), an unusable answer counted in decision_errors.
  json output(const std::vector<BatchAnswer> &answers);

 private:
  const ProbeOptions &o_;
  json out_ = json::array(), requests_ = json::array();
  std::vector<std::size_t> need_llm_;  // positions in out_ that get decision probes
};

}  // namespace compression
