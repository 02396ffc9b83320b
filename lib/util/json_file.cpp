#include "util/json_file.h"

#include <fstream>
#include <iterator>

#include "evalgraph/json_bounded.hpp"

namespace evalgraph {

bool read_json_file_bounded(const std::filesystem::path &file, nlohmann::json &out, int max_depth, std::string *why) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    if (why) *why = "cannot be read";
    return false;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_bounded(text, out, max_depth, why);
}

}  // namespace evalgraph
