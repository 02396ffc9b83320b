// create-dataset (experiment.h): examples asked of a model, written as a data file of the configuration folder.
#include <fmt/format.h>
#include <xlsxwriter.h>
#include <yaml-cpp/yaml.h>

#include <regex>
#include <sstream>

#include "chatbot_config/experiment.h"
#include "entry/pipeline_entry.h"
#include "evalgraph/json_bounded.hpp"
#include "llm/llm_service.h"
#include "util/atomic_file.h"

namespace evalgraph::chatbot {
namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> parse_example_list(const std::string &answer) {
  auto trim = [](std::string s) {
    auto a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  auto clean = [&](std::string s) {
    s = trim(s);
    for (bool changed = true; changed && s.size() >= 2;) {
      changed = false;
      for (const std::string q : {"\"", "'", "**", "\xE2\x80\x9E", "\xE2\x80\x9C", "\xE2\x80\x9D"}) {
        if (s.size() >= 2 * q.size() && s.compare(0, q.size(), q) == 0) {
          // remove a matching pair of quotes (any closing quote of the set)
          for (const std::string r : {"\"", "'", "**", "\xE2\x80\x9C", "\xE2\x80\x9D"})
            if (s.size() >= q.size() + r.size() && s.compare(s.size() - r.size(), r.size(), r) == 0) {
              s = trim(s.substr(q.size(), s.size() - q.size() - r.size()));
              changed = true;
              break;
            }
        }
        if (changed) break;
      }
    }
    if (!s.empty() && s.back() == ',') s = trim(s.substr(0, s.size() - 1));
    return s;
  };
  std::vector<std::string> out;
  // 1. A JSON array (possibly inside a code fence or an object, with prose around it). At most kMaxTries
  // candidate spans are parsed, each nested at most 8 deep: an answer of 100,000 brackets costs no hour.
  constexpr int kMaxTries = 200;
  int tries = 0;
  for (std::size_t a = answer.find('['); a != std::string::npos && out.empty() && tries < kMaxTries;
       a = answer.find('[', a + 1)) {
    std::size_t b = answer.rfind(']');
    while (b != std::string::npos && b > a && out.empty() && tries++ < kMaxTries) {
      json j;
      if (!evalgraph::parse_bounded(std::string_view(answer).substr(a, b - a + 1), j, 8)) j = json(json::value_t::discarded);
      if (!j.is_discarded() && j.is_array()) {
        for (const auto &x : j) {
          if (x.is_string()) {
            out.push_back(trim(x.get<std::string>()));
          } else if (x.is_object()) {
            std::string text;
            for (const char *k : {"text", "example", "Original", "original", "beispiel", "Beispiel"})
              if (text.empty() && x.contains(k) && x[k].is_string()) text = x[k].get<std::string>();
            for (const auto &[k, v] : x.items())
              if (text.empty() && v.is_string()) text = v.get<std::string>();
            out.push_back(trim(text));
          }
        }
        out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
        if (!out.empty()) return out;
        break;
      }
      b = b == 0 ? std::string::npos : answer.rfind(']', b - 1);
    }
  }
  // 2. Numbered or bulleted lines.
  static const std::regex item(R"(^\s*(?:\d{1,4}\s*[.):]|[-*+]|\xE2\x80\xA2)\s+(.+)$)");
  std::istringstream in(answer);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    if (std::regex_match(line, m, item)) {
      std::string s = clean(m[1].str());
      if (!s.empty()) out.push_back(s);
    }
  }
  return out;
}

namespace {

// create_dataset.yaml, checked.
struct DatasetRequest {
  std::string name, num, desc, crit, sys, user, format;
  long n = 0;
  json provider = json::object();
};

DatasetRequest read_create_dataset_yaml(const fs::path &cfg_dir) {
  const std::string file = (cfg_dir / "create_dataset.yaml").string();
  std::vector<Diagnostic> d;
  if (!fs::exists(file)) throw ConfigError({{{file, 0, 0}, "file not found; create it (dataset_name, num_examples, description, criteria, llm_config, system_prompt, user_prompt, output_format)"}});
  YAML::Node y = load_yaml_file_checked(file);  // nesting and alias expansion checked (config/yaml_guard.h)
  auto at = [&](const YAML::Node &n) -> Location {
    if (!n || n.Mark().is_null()) return {file, 1, 1};
    return {file, n.Mark().line + 1, n.Mark().column + 1};
  };
  if (!y.IsMap()) throw ConfigError({{{file, 1, 1}, "create_dataset.yaml must be a mapping"}});
  const std::vector<std::string> allowed = {"dataset_name", "num_examples", "description", "criteria", "llm_config",
                                            "system_prompt", "user_prompt", "output_format"};
  for (const auto &kv : y)
    if (std::find(allowed.begin(), allowed.end(), kv.first.Scalar()) == allowed.end())
      d.push_back({at(kv.first), fmt::format("unknown key '{}'{}", kv.first.Scalar(), did_you_mean(kv.first.Scalar(), allowed))});
  auto str = [&](const char *k, bool required) {
    if (!y[k] || !y[k].IsScalar()) {
      if (required) d.push_back({at(y), fmt::format("create_dataset.yaml needs `{}`", k)});
      return std::string();
    }
    return y[k].Scalar();
  };
  DatasetRequest r;
  r.name = str("dataset_name", true), r.num = str("num_examples", true), r.desc = str("description", false),
  r.crit = str("criteria", false), r.sys = str("system_prompt", false), r.user = str("user_prompt", true),
  r.format = y["output_format"] ? str("output_format", false) : "csv";
  char *end = nullptr;
  r.n = std::strtol(r.num.c_str(), &end, 10);
  if (!r.num.empty() && (*end != '\0' || r.n < 1)) d.push_back({at(y["num_examples"]), "num_examples must be a positive whole number"});
  if (r.format != "csv" && r.format != "xlsx") d.push_back({at(y["output_format"]), fmt::format("output_format must be csv or xlsx, not '{}'", r.format)});
  if (r.name.find('/') != std::string::npos) d.push_back({at(y["dataset_name"]), "dataset_name may not contain '/'"});
  // The model: llm_config {label, api {url, auth {secret_path}}}, paths relative to the project folder.
  YAML::Node lc = y["llm_config"];
  YAML::Node api = lc && lc.IsMap() ? lc["api"] : YAML::Node();
  if (!api || !api.IsMap() || !api["url"]) {
    d.push_back({at(lc ? lc : y), "llm_config needs label and api: {url: <OpenAI-compatible base URL>}"});
  } else {
    r.provider["base_url"] = api["url"].Scalar();
    r.provider["model"] = lc["model"] ? lc["model"].Scalar() : lc["label"] ? lc["label"].Scalar() : "";
    if (YAML::Node auth = api["auth"]; auth && auth.IsMap() && auth["secret_path"]) {
      fs::path p = auth["secret_path"].Scalar();
      if (p.is_relative()) p = (cfg_dir.parent_path() / p).lexically_normal();
      if (!fs::exists(p))
        d.push_back({at(auth["secret_path"]), fmt::format("the secret file {} does not exist; put the API key into it, or remove `auth:`", p.string())});
      else
        r.provider["api_key_file"] = p.string();
    }
  }
  if (!d.empty()) throw ConfigError(d);
  return r;
}

// One request to the model; the examples parsed out of its answer.
std::vector<std::string> ask_for_examples(const DatasetRequest &r, const CreateSettings &s) {
  auto render = [&](std::string t) {
    const std::vector<std::pair<std::string, std::string>> vars = {{"{num_examples}", r.num}, {"{description}", r.desc}, {"{criteria}", r.crit}};
    for (const auto &[k, v] : vars)
      for (std::size_t p = 0; (p = t.find(k, p)) != std::string::npos; p += v.size()) t.replace(p, k.size(), v);
    return t;
  };
  json body = {{"messages", json::array()}};
  if (!r.sys.empty()) body["messages"].push_back({{"role", "system"}, {"content", render(r.sys)}});
  body["messages"].push_back({{"role", "user"}, {"content", render(r.user)}});
  llm::CacheOptions co;
  co.enabled = !s.no_cache;
  co.path = s.cache_path;
  llm::LlmService svc({llm::provider_from_json("create_dataset", r.provider)}, co);
  llm::CallResult res = svc.chat("create_dataset", body, 0);
  if (!res.ok) throw std::runtime_error("create-dataset: the LLM request failed: " + res.error);
  std::string answer;
  try {
    answer = res.response.at("choices").at(0).at("message").at("content").get<std::string>();
  } catch (const std::exception &) {
    throw std::runtime_error("create-dataset: the LLM answer has no text content");
  }
  std::vector<std::string> items = parse_example_list(answer);
  if (items.empty())
    throw std::runtime_error("create-dataset: no list of examples found in the answer (expected a JSON array, or numbered or "
                             "bulleted lines); its start: " + answer.substr(0, 200));
  return items;
}

// The examples as a one-column table ("Original") in .csv or .xlsx.
void write_examples(const std::vector<std::string> &items, const std::string &format, const fs::path &out) {
  if (format == "csv") {
    std::string text = "Original\n";
    for (const auto &it : items) {
      bool quote = it.find_first_of(",\"\r\n") != std::string::npos;
      std::string cell = it;
      if (quote) {
        cell.clear();
        for (char c : it) cell += c == '"' ? std::string("\"\"") : std::string(1, c);
        cell = "\"" + cell + "\"";
      }
      text += cell + "\n";
    }
    write_file_atomically(out, text);
    return;
  }
  std::string partial = out.string() + ".partial";
  lxw_workbook *wb = workbook_new(partial.c_str());
  if (wb == nullptr) throw std::runtime_error("cannot write " + partial);
  lxw_worksheet *ws = workbook_add_worksheet(wb, nullptr);
  worksheet_write_string(ws, 0, 0, "Original", nullptr);
  for (std::size_t i = 0; i < items.size(); ++i)
    worksheet_write_string(ws, static_cast<lxw_row_t>(i + 1), 0, items[i].c_str(), nullptr);
  if (workbook_close(wb) != LXW_NO_ERROR) throw std::runtime_error("cannot write " + partial);
  fs::rename(partial, out);
}

}  // namespace

fs::path create_dataset(const CreateSettings &s, std::vector<std::string> &warnings) {
  fs::path cfg_dir = fs::absolute(s.config_dir).lexically_normal();
  if (cfg_dir.filename().empty()) cfg_dir = cfg_dir.parent_path();
  const DatasetRequest r = read_create_dataset_yaml(cfg_dir);
  std::vector<std::string> items = ask_for_examples(r, s);
  if (static_cast<long>(items.size()) != r.n)
    warnings.push_back(fmt::format("the model returned {} examples, num_examples is {}", items.size(), r.n));
  fs::path data_dir = cfg_dir.parent_path() / "data";
  fs::create_directories(data_dir);
  fs::path out = data_dir / (r.name + "." + r.format);
  write_examples(items, r.format, out);
  return out;
}

}  // namespace evalgraph::chatbot
