#pragma once
#include "embed/tfidf.h"
#include "ksodi/embed.hpp"

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
