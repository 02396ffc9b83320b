#include "counting.hpp"

#include <cctype>
#include <cstddef>

namespace word_count {
Counts count(std::string_view text, int min_word_length, bool count_numbers) {
  Counts out;
  int len = 0, digits = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const unsigned char c = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
    if (std::isalnum(c) || c >= 0x80) {  // inside a word
      ++len;
      digits += std::isdigit(c) ? 1 : 0;
    } else {  // a word ends here
      out.words += len >= min_word_length && (count_numbers || digits < len);
      out.sentences += c == '.' || c == '!' || c == '?';
      len = digits = 0;
    }
  }
  return out;
}
}  // namespace word_count
