// The parameters of one model call that every compression node makes (declared once, evalgraph/params.hpp):
// a node's own parameter struct derives from LlmRequest and its Params start with llm_request_params().
#pragma once

#include <string>

#include "evalgraph/params.hpp"

namespace compression {

struct LlmRequest {
  std::string provider;  // "": the pipeline's default
  double temperature = 0;
  int max_tokens = 0;  // 0: not sent
};

inline const evalgraph::Params<LlmRequest> &llm_request_params() {
  using evalgraph::param;
  static const evalgraph::Params<LlmRequest> p{{
    param(&LlmRequest::provider, "provider", "Pipeline provider of the model this node calls (\"\": the pipeline's default)"),
    param(&LlmRequest::temperature, "temperature", "Temperature of the request").range(0, 2),
    param(&LlmRequest::max_tokens, "max_tokens", "max_tokens of the request (null: not sent)").at_least(1).shown_default(nullptr),
  }};
  return p;
}

}  // namespace compression
