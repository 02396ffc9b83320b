#pragma once
// Parsing JSON text into a nlohmann::json faster than json::parse: the text is checked by rawjson::valid()
// (as strict as nlohmann's parser), then built in one pass that copies strings in runs instead of character by
// character. The result equals json::parse(text) (numbers are parsed by nlohmann itself); text that valid()
// refuses (nesting deeper than kMaxDepth included) gives a discarded value, as json::parse(text, nullptr, false)
// does for text that is not JSON. The host's chat service parses every request a plugin hands over with it
// (see bench/estimate_bench.sh).
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalgraph::rawjson {

nlohmann::json parse(std::string_view text);

}  // namespace evalgraph::rawjson
