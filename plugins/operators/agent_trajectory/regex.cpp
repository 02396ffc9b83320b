// Regexes through PCRE2: Perl-compatible syntax, UTF-8, and a matcher that keeps its backtracking on the heap
// under a match limit and a heap limit. std::regex recurses once per character of the text and overflows the
// stack on a few thousand characters (`.*x` over 16 KiB crashes an 8 MiB stack), which a record must not do.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

#include "trajectory.hpp"

namespace trajectory {

namespace {
std::string pcre2_words(int code) {
  PCRE2_UCHAR buf[256];
  const int n = pcre2_get_error_message(code, buf, sizeof buf);
  return n < 0 ? "error " + std::to_string(code)
               : std::string(reinterpret_cast<const char *>(buf), static_cast<std::size_t>(n));
}
}  // namespace

struct Regex::Compiled {
  pcre2_code *code = nullptr;
  pcre2_match_context *limits = nullptr;  // read only once built: shared by the threads that match
  ~Compiled() {
    pcre2_match_context_free(limits);
    pcre2_code_free(code);
  }
};

Regex::Regex(const std::string &pattern) : c_(std::make_unique<Compiled>()) {
  int code = 0;
  PCRE2_SIZE at = 0;
  c_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                           PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &at, nullptr);
  if (c_->code == nullptr) throw std::invalid_argument(pcre2_words(code) + " at offset " + std::to_string(at));
  c_->limits = pcre2_match_context_create(nullptr);
  if (c_->limits == nullptr) throw std::bad_alloc();
  pcre2_set_match_limit(c_->limits, kRegexMatchLimit);
  pcre2_set_heap_limit(c_->limits, kRegexHeapLimitKiB);
}

Regex::~Regex() = default;

Regex::Result Regex::search(std::string_view text, std::string *why) const {
  pcre2_match_data *m = pcre2_match_data_create_from_pattern(c_->code, nullptr);
  if (m == nullptr) throw std::bad_alloc();
  const int rc = pcre2_match(c_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0, m, c_->limits);
  pcre2_match_data_free(m);
  if (rc >= 0) return Result::Match;
  if (rc == PCRE2_ERROR_NOMATCH) return Result::NoMatch;
  if (why != nullptr) *why = pcre2_words(rc);
  return Result::GaveUp;
}

}  // namespace trajectory
