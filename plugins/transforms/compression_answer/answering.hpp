// compression.answer's work, no plugin ABI: one method's compressed context and recent messages read from a
// compression transform's output (or a text column), one request per probe that carries them and nothing
// else, and the answers written per probe.
#pragma once

#include <string>
#include <vector>

#include "compression/llm_params.hpp"
#include "compression/llm_util.hpp"

namespace compression {

// The system prompt of the model under test.
extern const char *const kAnswerSystem;

// compression.answer's parameters.
struct AnswerOptions : LlmRequest {
  std::string method, label;  // "": the transform's (or "custom" for a text column)
};

// One checkpoint's probes answered from one method's context: `in` holds `compressed` (a compression
// transform's output, or the text of a column) and `probes` (the probe node's output, or an array of probes).
// Input that does not fit: evalgraph::InputError. `in` and `o` must outlive it.
class ProbeAnswers {
 public:
  ProbeAnswers(const json &in, const AnswerOptions &o);
  // One request per probe, in the probes' order.
  const json &requests() const { return requests_; }
  // compression.answer's output, once the model's `answers` (one per request, in their order) are in.
  json output(const std::vector<BatchAnswer> &answers) const;

 private:
  const AnswerOptions &o_;
  const json *probes_ = nullptr;
  std::string method_, label_, block_;
  json tokens_kept_, tokens_history_, requests_ = json::array();
};

}  // namespace compression
