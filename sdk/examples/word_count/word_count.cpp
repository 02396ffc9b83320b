// example.word_count — counts words, sentences and characters of a text field. A complete plugin: one
// class, one NodeSpec, one EVALGRAPH_PLUGIN line. Parameters: `min_word_length` ignores shorter words,
// `count_numbers: false` ignores words made of digits only.
#include <evalgraph/plugin.hpp>

#include <cctype>

namespace {

struct Config {
  int min_word_length = 1;
  bool count_numbers = true;
};
const evalgraph::Params<Config> kParams{"Counts words, sentences and characters", {
  evalgraph::param(&Config::min_word_length, "min_word_length", "Ignore shorter words").at_least(1).unit("characters"),
  evalgraph::param(&Config::count_numbers, "count_numbers", "Count words made of digits only (\"2024\")"),
}};

class WordCount : public evalgraph::Node {
 public:
  WordCount(const evalgraph::Host &, const evalgraph::json &params) : cfg_(kParams.parse(params)) {}

  evalgraph::json process(evalgraph::Call &, const evalgraph::json &in) override {
    const std::string text = in.at("text").get<std::string>();
    int words = 0, sentences = 0, len = 0, digits = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
      unsigned char c = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
      if (std::isalnum(c) || c >= 0x80) {
        ++len;
        digits += std::isdigit(c) ? 1 : 0;
      } else {
        if (len >= cfg_.min_word_length && (cfg_.count_numbers || digits < len)) ++words;
        len = digits = 0;
        if (c == '.' || c == '!' || c == '?') ++sentences;
      }
    }
    return {{"words", words}, {"sentences", sentences}, {"characters", text.size()}, {"min_word_length", cfg_.min_word_length}};
  }

 private:
  Config cfg_;
};

}  // namespace

EVALGRAPH_PLUGIN("word-count", "1.0.0", "an out-of-tree example plugin",
                 evalgraph::node_type<WordCount>({EG_KIND_OPERATOR, "example.word_count", "counts words and sentences",
                                                  kParams.schema(), {"text"}, {}, {"words", "sentences", "characters", "min_word_length"},
                                                  EG_FLAG_THREAD_SAFE}))
