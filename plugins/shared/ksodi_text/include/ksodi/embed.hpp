// The embedding seam of the KSODI compute functions: the plugins pass a function that calls the host's
// embedding service, the tests pass one that calls the TF-IDF embedder directly.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ksodi {

struct EmbedResult {
  std::string model_id;
  std::size_t dim = 0;
  std::vector<float> data;  // row-major: vector i is data[i*dim, (i+1)*dim)
  const float *row(std::size_t i) const { return data.data() + i * dim; }
};

// Embeds all texts in ONE call (TF-IDF vectors are only comparable within a call).
using EmbedFn = std::function<EmbedResult(const std::vector<std::string_view> &)>;

// Cosine similarity; 0 when either vector is zero (e.g. an empty text).
inline double cosine(const float *a, const float *b, std::size_t dim) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < dim; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na <= 0 || nb <= 0) return 0.0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

inline double clip01(double v) { return v < 0 ? 0.0 : (v > 1 ? 1.0 : v); }

}  // namespace ksodi
