// example.word_count's computation, without the plugin ABI (a static library by evalgraph_plugin_core, so a
// test can link it on its own).
#pragma once
#include <string_view>

namespace word_count {
struct Counts {
  int words = 0;
  int sentences = 0;
};
// Words are runs of letters, digits and non-ASCII bytes; a word counts when it has min_word_length characters or
// more and, unless count_numbers, is not made of digits only. A sentence ends at '.', '!' or '?'.
Counts count(std::string_view text, int min_word_length, bool count_numbers);
}  // namespace word_count
