#include "run_folder/run_folder.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <fstream>
#include <sstream>

namespace evalgraph::run_folder {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
}  // namespace

fs::path new_run_dir(const std::string &name, const fs::path &root) {
  std::string stamp = fmt::format("{:%Y%m%d-%H%M%S}", fmt::localtime(std::time(nullptr)));
  fs::path dir = root / (name + "__" + stamp);
  for (int k = 2; fs::exists(dir); ++k) dir = root / fmt::format("{}__{}-{}", name, stamp, k);
  return dir;
}

std::string shard_suffix(int index, int count) { return fmt::format("__shard-{}-of-{}", index + 1, count); }

std::string data_format(const fs::path &file, const std::string &declared) {
  std::string fmt = lower(declared);
  if (fmt == "ndjson") return "jsonl";
  if (!fmt.empty()) return fmt;
  std::string ext = lower(file.extension().string());
  if (ext == ".csv") return "csv";
  if (ext == ".tsv" || ext == ".tab") return "tsv";
  if (ext == ".jsonl" || ext == ".ndjson" || ext == ".json") return "jsonl";
  return "";
}

// Adds every number of `add` into `acc` (recursively), except prices, which are taken as they are.
void sum_cost_json(nlohmann::json &acc, const nlohmann::json &add) {
  for (const auto &[k, v] : add.items()) {
    if (k == "price" || !acc.contains(k)) {
      acc[k] = v;
    } else if (v.is_object() && acc[k].is_object()) {
      sum_cost_json(acc[k], v);
    } else if (v.is_number_integer() && acc[k].is_number_integer()) {
      acc[k] = acc[k].get<long long>() + v.get<long long>();
    } else if (v.is_number() && acc[k].is_number()) {
      acc[k] = acc[k].get<double>() + v.get<double>();
    }
  }
}

std::string pipeline_text(const fs::path &run) {
  std::ifstream in(pipeline_copy(run), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace evalgraph::run_folder
