#include "config/diagnostics.h"

#include <algorithm>
#include <numeric>

namespace evalgraph {

std::string Location::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {
std::string join_diags(const std::vector<Diagnostic> &d) {
  std::string s;
  for (const auto &x : d) {
    if (!s.empty()) s += '\n';
    s += x.str();
  }
  return s;
}
}  // namespace

ConfigError::ConfigError(std::vector<Diagnostic> d) : std::runtime_error(join_diags(d)), diags_(std::move(d)) {}

std::size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string did_you_mean(const std::string &word, const std::vector<std::string> &candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto &c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

std::string join_list(const std::vector<std::string> &words, const char *sep) {
  std::string s;
  for (const auto &x : words) s += (s.empty() ? "" : sep) + x;
  return s;
}

void refuse(const std::string &where, const std::string &msg) { throw ConfigError({{{where, 0, 0}, msg}}); }

}  // namespace evalgraph
