// transform.http's request and response mapping: see exchange.hpp.
#include "exchange.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace evalgraph_transforms {

json render_json(const json &t, const std::vector<std::pair<std::string, std::string>> &vars) {
  if (t.is_string()) return render(t.get<std::string>(), vars);
  if (t.is_array() || t.is_object()) {
    json out = t;
    for (auto it = out.begin(); it != out.end(); ++it) *it = render_json(*it, vars);
    return out;
  }
  return t;
}

std::string answer_text(const std::string &answer, const json::json_pointer &pointer, const std::string &url) {
  json j;  // bounded: an endpoint's answer nested 100,000 deep is refused, not dumped (recursion)
  std::string why;
  if (!evalgraph::parse_bounded(answer, j, evalgraph::kDefaultNestingDepth, &why))
    throw std::runtime_error(url + ": the answer is " + why + ": " + answer.substr(0, 200));
  if (!j.contains(pointer))
    throw std::runtime_error(url + ": the answer has nothing at " + pointer.to_string() + ": " + answer.substr(0, 200));
  const json &v = j.at(pointer);
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (trim(text).empty()) throw std::runtime_error(url + ": the answer at " + pointer.to_string() + " is empty");
  return trim(text);
}

std::string read_token(const std::string &file, const json &pipeline_dir) {
  std::filesystem::path f = file;
  if (f.is_relative() && pipeline_dir.is_string()) f = std::filesystem::path(pipeline_dir.get<std::string>()) / f;
  std::ifstream in(f);
  if (!in) throw std::invalid_argument("cannot read api_key_file " + f.string());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = trim(ss.str());
  if (token.empty()) throw std::invalid_argument("api_key_file " + f.string() + " is empty");
  return token;
}

bool transient_status(long status) { return status == 429 || status == 408 || status >= 500; }

}  // namespace evalgraph_transforms
