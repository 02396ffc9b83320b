#pragma once
#include "embed/tfidf.h"
#include "ksodi/embed.hpp"
#include "ksodi_measures/o0.hpp"

// The EmbedFn the tests use: the engine's offline TF-IDF embedder, called directly.
inline ksodi::EmbedFn tfidf_fn(int *calls = nullptr) {
  return [calls](const std::vector<std::string_view> &texts) {
    if (calls != nullptr) ++*calls;
    ksodi::EmbedResult r;
    evalgraph::embed::TfidfEmbedder().embed(texts, r.data, r.dim);
    r.model_id = evalgraph::embed::TfidfEmbedder::model_id();
    return r;
  };
}

// An O0 unit: the answer with its retrieved docs and tool outputs.
inline ksodi::O0Input o0_unit(std::string answer, std::vector<evalgraph::Doc> docs = {},
                              std::vector<evalgraph::Doc> tools = {}) {
  ksodi::O0Input in;
  in.answer = std::move(answer);
  in.docs = std::move(docs);
  in.tool_outputs = std::move(tools);
  return in;
}
