#pragma once
// The default offline embedder ("tfidf-v1"): exact TF-IDF over the texts of one call. See README.md.
#include <cstddef>
#include <string_view>
#include <vector>

namespace evalgraph::embed {

class TfidfEmbedder {
 public:
  static const char *model_id() { return "tfidf-v1"; }

  // Embeds `texts` into `out` (row-major, texts.size() x dim). The vocabulary and the document frequencies
  // are those of these texts only, so vectors are comparable within one call and never across calls.
  // dim = vocabulary size (at least 1, so that all-empty input still yields zero vectors of dim 1).
  void embed(const std::vector<std::string_view> &texts, std::vector<float> &out, std::size_t &dim) const;

  // The tokens the embedder uses for one text (lowercased, stopwords removed) — for tests and audits.
  static std::vector<std::string_view> tokens(std::string_view lowered);
  static bool is_stopword(std::string_view token);
};

}  // namespace evalgraph::embed
