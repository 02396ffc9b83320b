#pragma once
// Locations and errors for everything a user writes: every message carries file:line:column.
#include <stdexcept>
#include <string>
#include <vector>

namespace evalgraph {

struct Location {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based
  std::string str() const;
};

struct Diagnostic {
  Location where;
  std::string message;
  std::string str() const { return where.str() + ": error: " + message; }
};

// Thrown when a pipeline cannot run; carries every problem found, not just the first.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> d);
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

// Throws a ConfigError with one problem at `where`: a file, a folder or a command word, without a line (a
// refused command line: exit 2).
[[noreturn]] void refuse(const std::string &where, const std::string &msg);

// The words separated by `sep` ("a, b, c"), for messages.
std::string join_list(const std::vector<std::string> &words, const char *sep = ", ");

// "did you mean 'x'?" — the closest candidate within a small edit distance, or empty.
std::string did_you_mean(const std::string &word, const std::vector<std::string> &candidates);
std::size_t edit_distance(const std::string &a, const std::string &b);

}  // namespace evalgraph
