// example.word_count: counts words (min_word_length or longer; digits only if count_numbers), sentences, characters.
#include <evalgraph/plugin.hpp>

#include "counting.hpp"

struct Config { int min_word_length = 1; bool count_numbers = true; };
const evalgraph::Params<Config> kParams{{
  evalgraph::param(&Config::min_word_length, "min_word_length", "Ignore shorter words").at_least(1).unit("characters"),
  evalgraph::param(&Config::count_numbers, "count_numbers", "Count words made of digits only (\"2024\")")}};
const evalgraph::NodeSpec kSpec{.name = "example.word_count", .description = "counts words and sentences",
  .reads = {"text"}, .writes = {"words", "sentences", "characters", "min_word_length"},
  .flags = EG_FLAG_THREAD_SAFE, .params = kParams};

class WordCount : public evalgraph::Node {
 public:
  WordCount(const evalgraph::Host &, const Config &c) : cfg_(c) {}
  evalgraph::json process(evalgraph::Call &, const evalgraph::json &in) override {
    const std::string text = in.at("text");
    const word_count::Counts n = word_count::count(text, cfg_.min_word_length, cfg_.count_numbers);
    return {{"words", n.words}, {"sentences", n.sentences}, {"characters", text.size()}, {"min_word_length", cfg_.min_word_length}};
  }

 private:
  const Config cfg_;
};

EVALGRAPH_PLUGIN("word-count", "an out-of-tree example plugin", evalgraph::node_type<WordCount>(kSpec))
