#include "chatbot_config/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "chatbot_config/xlsx_reader.h"
#include "entry/pipeline_entry.h"

namespace evalgraph::chatbot {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Ctx {
  std::vector<Diagnostic> diags;
  void error(const Location &at, std::string msg) { diags.push_back({at, std::move(msg)}); }
};

Location loc(const std::string &file, const YAML::Node &n) {
  if (!n || n.Mark().is_null()) return {file, 1, 1};
  return {file, n.Mark().line + 1, n.Mark().column + 1};
}

// Loads a YAML file; a missing or broken file is a diagnostic (and an undefined node).
YAML::Node load(Ctx &ctx, const fs::path &file, bool required, const std::string &hint) {
  if (!fs::exists(file)) {
    if (required) ctx.error({file.string(), 0, 0}, "file not found; " + hint);
    return {};
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    ctx.error({file.string(), 0, 0}, "cannot read the file (is it readable?)");
    return {};
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    return load_yaml_checked(text.str(), file.string());  // nesting and alias expansion checked (config/yaml_guard.h)
  } catch (const ConfigError &e) {
    for (const auto &d : e.diagnostics()) ctx.error(d.where, d.message);
    return {};
  }
}

std::string scalar(const YAML::Node &n) { return n && n.IsScalar() ? n.Scalar() : std::string(); }

json to_json(const YAML::Node &n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto &kv : n) o[kv.first.Scalar()] = to_json(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto &x : n) a.push_back(to_json(x));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string &s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~") return nullptr;
      char *end = nullptr;
      long long i = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && *end == '\0') return i;
      double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && *end == '\0') return d;
      return s;
    }
    default:
      return nullptr;
  }
}

void check_keys(Ctx &ctx, const std::string &file, const YAML::Node &map, const std::vector<std::string> &allowed,
                const std::string &what) {
  if (!map || !map.IsMap()) return;
  for (const auto &kv : map) {
    std::string k = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      ctx.error(loc(file, kv.first), fmt::format("unknown key '{}' in {}{}; allowed: {}", k, what, did_you_mean(k, allowed),
                                                 fmt::join(allowed, ", ")));
  }
}

// A positive integer written as a number or a quoted number ("40").
bool positive_int(const YAML::Node &n, int &out) {
  std::string s = scalar(n);
  char *end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 1 || v > 1000000) return false;
  out = static_cast<int>(v);
  return true;
}

std::string read_secret(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  auto a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// Resolves a path of the config (relative to the project folder, where their Docker setup runs).
fs::path project_path(const Experiment &e, const std::string &p) {
  fs::path x(p);
  return x.is_absolute() ? x : (e.project_dir / x).lexically_normal();
}

// The api block of llm_parameters.yaml / create_dataset.yaml → provider json (base_url, model, api_key_file).
json provider_block(Ctx &ctx, const Experiment &e, const std::string &file, const YAML::Node &cfg, const std::string &what) {
  json prov = json::object();
  YAML::Node api = cfg["api"];
  if (!api || !api.IsMap() || !api["url"]) {
    ctx.error(loc(file, cfg), what + ": needs api: {url: <OpenAI-compatible base URL>} (e.g. http://127.0.0.1:8000/v1)");
    return prov;
  }
  prov["base_url"] = scalar(api["url"]);
  std::string model = cfg["model"] ? scalar(cfg["model"]) : scalar(cfg["label"]);
  if (model.empty()) ctx.error(loc(file, cfg), what + ": needs `label:` (the model name sent to the server)");
  prov["model"] = model;
  if (YAML::Node auth = api["auth"]; auth && auth.IsMap() && auth["secret_path"]) {
    std::string sp = scalar(auth["secret_path"]);
    fs::path p = project_path(e, sp);
    if (!fs::exists(p)) {
      ctx.error(loc(file, auth["secret_path"]),
                fmt::format("{}: the secret file '{}' does not exist (resolved against the project folder {}: {}); put the "
                            "API key into it, or remove `auth:` for a server that needs no key",
                            what, sp, e.project_dir.string(), p.string()));
    } else if (read_secret(p).empty()) {
      ctx.error(loc(file, auth["secret_path"]), fmt::format("{}: the secret file {} is empty; put the API key into it", what, p.string()));
    } else {
      prov["api_key_file"] = p.string();
    }
  }
  return prov;
}

}  // namespace

std::string slug(const std::string &s) {
  std::string out;
  bool us = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::string add;
    if (c == 0xC3 && i + 1 < s.size()) {
      unsigned char d = static_cast<unsigned char>(s[i + 1]);
      ++i;
      switch (d) {
        case 0xA4: case 0x84: add = "ae"; break;
        case 0xB6: case 0x96: add = "oe"; break;
        case 0xBC: case 0x9C: add = "ue"; break;
        case 0x9F: add = "ss"; break;
        default: add = "_";
      }
    } else if (std::isalnum(c) && c < 0x80) {
      add = std::string(1, static_cast<char>(std::tolower(c)));
    } else {
      add = "_";
    }
    for (char ch : add) {
      if (ch == '_') {
        if (!us && !out.empty()) out += '_';
        us = true;
      } else {
        out += ch;
        us = false;
      }
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "x" : out;
}

bool Experiment::needs_judge() const {
  for (const auto &c : criteria)
    if (c.is_task || c.node_type == "index.llm_hallucination") return true;
  return false;
}

Table read_table(const fs::path &file, const std::string &separator) {
  Table t;
  if (file.extension() == ".xlsx") {
    auto rows = read_xlsx(file);
    if (rows.empty()) return t;
    t.header = rows[0];
    for (std::size_t i = 1; i < rows.size(); ++i) {
      bool empty = true;
      for (const auto &c : rows[i]) empty = empty && c.empty();
      if (empty) continue;
      rows[i].resize(std::max(rows[i].size(), t.header.size()));
      t.rows.push_back(rows[i]);
      t.lines.push_back(i + 1);
    }
    return t;
  }
  auto reader = io::open_dataset(file, "csv", {{"separator", separator}});
  t.header = reader->columns();
  json rec;
  while (reader->next(rec)) {
    std::vector<std::string> row;
    for (const auto &h : t.header) {
      auto it = rec.find(h);
      row.push_back(it == rec.end() || it->is_null() ? "" : it->is_string() ? it->get<std::string>() : it->dump());
    }
    t.rows.push_back(std::move(row));
    t.lines.push_back(reader->line());
  }
  if (t.header.empty()) t.header = reader->columns();
  return t;
}

namespace {

// Reads the configuration folder section by section, in the order the checks report: evaluation.yaml (the
// experiment, its data files), evalgraph_models.yaml, the transformations, the tasks (llm_tasks.yaml), the
// indices, score_weighting and map, the judge (llm_parameters.yaml and its prompt file), and last the data
// files' columns. Every problem is collected; read() throws them together.
class ConfigReader {
 public:
  ConfigReader(const fs::path &config_dir_in, const PluginRegistry &reg) : reg_(reg) {
    e_.config_dir = fs::absolute(config_dir_in).lexically_normal();
    if (e_.config_dir.filename().empty()) e_.config_dir = e_.config_dir.parent_path();
    e_.project_dir = e_.config_dir.parent_path();
    if (!fs::is_directory(e_.config_dir))
      throw ConfigError({{{config_dir_in.string(), 0, 0},
                          "the configuration folder does not exist; give --config-dir <folder with evaluation.yaml>"}});
    ef_ = (e_.config_dir / "evaluation.yaml").string();
    mf_ = (e_.config_dir / "evalgraph_models.yaml").string();
  }

  Experiment read(bool only_transform) {
    ev_ = load(ctx_, ef_, true, "create it (experiment_name, data_files, transformations, tasks, ...)");
    if (ev_ && !ev_.IsMap()) ctx_.error({ef_, 1, 1}, "evaluation.yaml must be a mapping");
    const bool ev = ev_ && ev_.IsMap();
    if (ev) read_experiment();
    if (ev) read_data_files();
    read_models_file();
    if (ev) read_transformations();
    if (ev) read_tasks();
    if (ev) read_indices();
    if (ev) read_score_weighting();
    if (ev) read_map();
    if (!only_transform && e_.needs_judge()) read_judge();
    check_data_columns();
    if (!ctx_.diags.empty()) throw ConfigError(std::move(ctx_.diags));
    return std::move(e_);
  }

 private:
  bool non_empty(const YAML::Node &node, YAML::NodeType::value type, const char *what);
  void read_experiment();
  void read_data_files();
  void read_models_file();
  void read_transformations();
  void read_transformation(Transformation t, const std::string &file, const YAML::Node &spec);
  void read_llm_transformation(Transformation &t, const std::string &file, const YAML::Node &spec);
  void read_http_transformation(Transformation &t, const std::string &file, const YAML::Node &spec);
  void read_tasks();
  void read_indices();
  void read_criteria(const char *key, bool task, const char *not_a_list, const char *twice,
                     const std::function<bool(Criterion &)> &resolve);
  void read_score_weighting();
  void read_map();
  void read_judge();
  void read_system_prompts(const std::string &pf, const YAML::Node &evn);
  void check_data_columns();
  std::vector<Criterion>::iterator criterion(const std::string &name) {
    return std::find_if(e_.criteria.begin(), e_.criteria.end(), [&](const Criterion &c) { return c.name == name; });
  }

  const PluginRegistry &reg_;
  Ctx ctx_;
  Experiment e_;
  std::string ef_, mf_;   // evaluation.yaml, evalgraph_models.yaml
  YAML::Node ev_;         // evaluation.yaml
  YAML::Node models_;     // evalgraph_models.yaml's models
  std::set<std::string> names_;  // the criteria's names (tasks and indices)
};

// evaluation.yaml: experiment_name, replications, csv_separator, input_column_name, output_column_name.
void ConfigReader::read_experiment() {
  check_keys(ctx_, ef_, ev_,
             {"experiment_name", "data_files", "replications", "csv_separator", "input_column_name", "output_column_name",
              "transformations", "tasks", "indices", "score_weighting", "map"},
             "evaluation.yaml");
  e_.experiment_name = scalar(ev_["experiment_name"]);
  if (e_.experiment_name.empty()) ctx_.error(loc(ef_, ev_), "evaluation.yaml needs experiment_name (names the results folder)");
  for (char c : e_.experiment_name)
    if (c == '/' || c == '\\' || c == '\0') {
      ctx_.error(loc(ef_, ev_["experiment_name"]), "experiment_name may not contain '/' or '\\' (it names a folder)");
      break;
    }
  if (auto r = ev_["replications"]; r && !positive_int(r, e_.replications))
    ctx_.error(loc(ef_, r), "replications must be a positive whole number (3 are recommended)");
  if (auto s = ev_["csv_separator"]) {
    e_.csv_separator = scalar(s);
    if (e_.csv_separator == "\\t") e_.csv_separator = "\t";
    if (e_.csv_separator.size() != 1) ctx_.error(loc(ef_, s), "csv_separator must be one character, e.g. \",\" or \";\"");
  }
  if (auto s = ev_["input_column_name"]) e_.input_column = scalar(s), e_.input_column_where = loc(ef_, s);
  else e_.input_column_where = loc(ef_, ev_);
  if (auto s = ev_["output_column_name"]) e_.output_column = scalar(s);
  if (e_.input_column.empty()) ctx_.error(loc(ef_, ev_["input_column_name"]), "input_column_name is empty");
}

// Whether `node` of evaluation.yaml is a `type` (sequence or mapping) with at least one entry; else reports
// `what` at it (at the file when it is missing) and says no.
bool ConfigReader::non_empty(const YAML::Node &node, YAML::NodeType::value type, const char *what) {
  if (node && node.Type() == type && node.size() > 0) return true;
  ctx_.error(loc(ef_, node ? node : ev_), what);
  return false;
}

// evaluation.yaml data_files: names in the data folder, with or without .csv/.xlsx.
void ConfigReader::read_data_files() {
  YAML::Node df = ev_["data_files"];
  if (!non_empty(df, YAML::NodeType::Sequence,
                 "data_files must list at least one file of the data folder (name without extension)"))
    return;
  for (const auto &n : df) {
    DataFile d{scalar(n), {}, loc(ef_, n)};
    fs::path data_dir = e_.project_dir / "data";
    std::vector<fs::path> found;
    fs::path given = data_dir / d.name;
    if ((given.extension() == ".csv" || given.extension() == ".xlsx") && fs::exists(given)) found.push_back(given);
    for (const char *ext : {".csv", ".xlsx"})
      if (found.empty() || given.extension() != ".csv") {
        fs::path p = data_dir / (d.name + ext);
        if (fs::exists(p)) found.push_back(p);
      }
    if (found.empty()) {
      ctx_.error(d.where, fmt::format("data file '{}' not found: neither {}.csv nor {}.xlsx is in {}; put it there or fix "
                                      "the name (without extension)",
                                      d.name, d.name, d.name, data_dir.string()));
    } else if (found.size() > 1) {
      ctx_.error(d.where, fmt::format("data file '{}' is ambiguous: {} and {} both exist; remove one or write the name with "
                                      "its extension",
                                      d.name, found[0].filename().string(), found[1].filename().string()));
    } else {
      d.path = found[0];
      e_.data_files.push_back(d);
    }
  }
}

// evalgraph_models.yaml (optional unless a backend transformation needs it): models: {id: {type, ...}}.
void ConfigReader::read_models_file() {
  YAML::Node models_root = load(ctx_, mf_, false, "");
  models_ = models_root && models_root.IsMap() ? models_root["models"] : YAML::Node();
  if (models_root && models_root.IsMap()) check_keys(ctx_, mf_, models_root, {"models"}, "evalgraph_models.yaml");
}

// evaluation.yaml transformations: {id: {type, label, ...}}; a backend one is described in evalgraph_models.yaml.
void ConfigReader::read_transformations() {
  YAML::Node tr = ev_["transformations"];
  if (!non_empty(tr, YAML::NodeType::Map, "transformations must map at least one id to {type, label, ...}")) return;
  for (const auto &kv : tr) {
    Transformation t;
    t.id = kv.first.Scalar();
    t.where = loc(ef_, kv.first);
    const YAML::Node &spec = kv.second;
    if (!spec.IsMap()) {
      ctx_.error(loc(ef_, spec), fmt::format("transformation '{}' must be a mapping with type and label", t.id));
      continue;
    }
    t.type = scalar(spec["type"]);
    t.label = spec["label"] ? scalar(spec["label"]) : t.id;
    if (t.type != "backend") {
      read_transformation(std::move(t), ef_, spec);
      continue;
    }
    check_keys(ctx_, ef_, spec, {"type", "label", "model_name", "name"}, fmt::format("transformation '{}'", t.id));
    std::string model_name = spec["model_name"] ? scalar(spec["model_name"]) : scalar(spec["name"]);
    YAML::Node m;
    if (models_ && models_.IsMap()) {
      if (models_[t.id]) m = models_[t.id];
      else if (!model_name.empty() && models_[model_name]) m = models_[model_name];
    }
    if (!m || !m.IsMap()) {
      ctx_.error(t.where, fmt::format("transformation '{}' (type backend{}) has no entry in {}: add under `models:` an "
                                      "entry '{}' with type llm (url, model, system_prompt, user_prompt) or type http "
                                      "(url, body, answer_pointer) — see pipelines/chatbot/README.md",
                                      t.id, model_name.empty() ? "" : ", model_name " + model_name, mf_, t.id));
      continue;
    }
    read_transformation(std::move(t), mf_, m);
  }
}

// One transformation of type llm, http or manual (from evaluation.yaml or a models entry).
void ConfigReader::read_transformation(Transformation t, const std::string &file, const YAML::Node &spec) {
  std::string type = scalar(spec["type"]);
  if (type == "llm") {
    read_llm_transformation(t, file, spec);
  } else if (type == "http") {
    read_http_transformation(t, file, spec);
  } else if (type == "manual") {
    check_keys(ctx_, file, spec, {"type", "label", "column"}, fmt::format("transformation '{}' (type manual)", t.id));
    t.plugin = "transform.manual";
    t.column = scalar(spec["column"]);
    if (t.column.empty())
      ctx_.error(loc(file, spec), fmt::format("transformation '{}' (type manual) needs `column:` (the column with the transformed text)", t.id));
    t.with["column"] = t.column;
  } else {
    ctx_.error(loc(file, spec["type"] ? spec["type"] : spec),
               fmt::format("transformation '{}': unknown type '{}'{}; use backend (the model or chatbot named in "
                           "config/evalgraph_models.yaml), manual (an existing column), llm or http",
                           t.id, type, did_you_mean(type, {"backend", "manual", "llm", "http"})));
    return;
  }
  e_.transformations.push_back(std::move(t));
}

void ConfigReader::read_llm_transformation(Transformation &t, const std::string &file, const YAML::Node &spec) {
  check_keys(ctx_, file, spec,
             {"type", "label", "model_name", "url", "model", "secret_path", "system_prompt", "user_prompt", "inference",
              "timeout_s", "max_in_flight", "requests_per_minute", "max_attempts"},
             fmt::format("transformation '{}' (type llm)", t.id));
  t.plugin = "transform.llm";
  if (!spec["url"] || !spec["model"])
    ctx_.error(loc(file, spec), fmt::format("transformation '{}' (type llm) needs `url:` (OpenAI-compatible base URL) and `model:`", t.id));
  t.provider = {{"base_url", scalar(spec["url"])}, {"model", scalar(spec["model"])}};
  for (const char *k : {"timeout_s", "max_in_flight", "requests_per_minute", "max_attempts"})
    if (spec[k]) t.provider[k] = to_json(spec[k]);
  if (spec["secret_path"]) {
    fs::path p = project_path(e_, scalar(spec["secret_path"]));
    if (!fs::exists(p) || read_secret(p).empty())
      ctx_.error(loc(file, spec["secret_path"]), fmt::format("transformation '{}': the secret file {} is missing or empty; "
                                                             "put the API key into it, or remove secret_path",
                                                             t.id, p.string()));
    else t.provider["api_key_file"] = p.string();
  }
  if (spec["system_prompt"]) t.with["system_prompt"] = scalar(spec["system_prompt"]);
  if (spec["user_prompt"]) t.with["user_prompt"] = scalar(spec["user_prompt"]);
  if (spec["inference"]) t.with["inference"] = to_json(spec["inference"]);
}

void ConfigReader::read_http_transformation(Transformation &t, const std::string &file, const YAML::Node &spec) {
  check_keys(ctx_, file, spec,
             {"type", "label", "model_name", "url", "body", "answer_pointer", "headers", "secret_path", "timeout_s", "retries",
              "retry_backoff_s"},
             fmt::format("transformation '{}' (type http)", t.id));
  t.plugin = "transform.http";
  if (!spec["url"]) ctx_.error(loc(file, spec), fmt::format("transformation '{}' (type http) needs `url:`", t.id));
  for (const char *k : {"url", "body", "answer_pointer", "headers", "timeout_s", "retries", "retry_backoff_s"})
    if (spec[k]) t.with[k] = to_json(spec[k]);
  if (spec["url"]) t.with["url"] = scalar(spec["url"]);
  if (spec["secret_path"]) {
    fs::path p = project_path(e_, scalar(spec["secret_path"]));
    if (!fs::exists(p)) ctx_.error(loc(file, spec["secret_path"]), fmt::format("transformation '{}': the secret file {} does not exist; put the token into it, or remove secret_path", t.id, p.string()));
    else t.with["api_key_file"] = p.string();
  }
}

// The criteria evaluation.yaml lists under `key` (tasks or indices), in order, each name once: `resolve` fills
// in what the name stands for and says whether it does (else it reported why not).
void ConfigReader::read_criteria(const char *key, bool task, const char *not_a_list, const char *twice,
                                 const std::function<bool(Criterion &)> &resolve) {
  auto list = ev_[key];
  if (!list) return;
  if (!list.IsSequence()) {
    ctx_.error(loc(ef_, list), not_a_list);
    return;
  }
  for (const auto &n : list) {
    Criterion c{scalar(n), scalar(n), task, "", "", 0, loc(ef_, n)};
    if (!names_.insert(c.name).second) ctx_.error(c.where, fmt::format(fmt::runtime(twice), c.name));
    else if (resolve(c)) e_.criteria.push_back(c);
  }
}

// evaluation.yaml tasks: titles of llm_tasks.yaml entries, whose text is the criterion's description.
void ConfigReader::read_tasks() {
  const std::string tf = (e_.config_dir / "llm_tasks.yaml").string();
  YAML::Node tasks_file;
  if (ev_["tasks"] && ev_["tasks"].size() > 0)
    tasks_file = load(ctx_, tf, true, "create it: one `title: |` entry with the criterion's description per task");
  read_criteria("tasks", true, "tasks must be a list of titles from llm_tasks.yaml", "task '{}' is listed twice",
                [&](Criterion &c) {
                  if (!tasks_file || !tasks_file.IsMap()) return true;
                  if (!tasks_file[c.name]) {
                    std::vector<std::string> known;
                    for (const auto &kv : tasks_file) known.push_back(kv.first.Scalar());
                    ctx_.error(c.where, fmt::format("task '{}' is not defined in {}{}; add `{}: |` with the "
                                                    "criterion's description there, or fix the title (defined: {})",
                                                    c.name, tf, did_you_mean(c.name, known), c.name,
                                                    fmt::join(known, ", ")));
                  } else {
                    c.description = scalar(tasks_file[c.name]);
                  }
                  return true;
                });
}

// evaluation.yaml indices: names of loaded INDEX node types (exactly, or as index.<slug>).
void ConfigReader::read_indices() {
  read_criteria("indices", false, "indices must be a list of index names",
                "'{}' is listed twice among tasks and indices", [&](Criterion &c) {
    const NodeTypeInfo *t = reg_.find(c.name);
    if (t == nullptr || t->type->kind != EG_KIND_INDEX) t = reg_.find("index." + slug(c.name));
    if (t == nullptr || t->type->kind != EG_KIND_INDEX) {
      std::vector<std::string> idx;
      for (const auto &[nm, ti] : reg_.types())
        if (ti.type->kind == EG_KIND_INDEX) idx.push_back(nm);
      ctx_.error(c.where, fmt::format("index '{}' is not a loaded index plugin (looked for node type 'index.{}'); loaded "
                                      "indices: {} — add the plugin's folder with --plugin-dir, or fix the name",
                                      c.name, slug(c.name), idx.empty() ? "(none)" : fmt::format("{}", fmt::join(idx, ", "))));
      return false;
    }
    c.node_type = t->name;
    return true;
  });
}

// evaluation.yaml score_weighting: {criterion: weight >= 0}; without it every criterion weighs 1.
void ConfigReader::read_score_weighting() {
  std::vector<std::string> all(names_.begin(), names_.end());
  auto sw = ev_["score_weighting"];
  if (!sw) {
    for (auto &c : e_.criteria) c.weight = 1;
    return;
  }
  if (!sw.IsMap()) {
    ctx_.error(loc(ef_, sw), "score_weighting must map criteria to weights");
    return;
  }
  e_.has_weighting = true;
  for (const auto &kv : sw) {
    std::string k = kv.first.Scalar();
    auto it = criterion(k);
    const std::string text = scalar(kv.second);  // (kept: `end` points into it)
    char *end = nullptr;
    double w = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || w < 0)
      ctx_.error(loc(ef_, kv.second), fmt::format("score_weighting '{}': the weight must be a number >= 0", k));
    else if (it == e_.criteria.end() && names_.count(k) == 0)
      ctx_.error(loc(ef_, kv.first), fmt::format("score_weighting names '{}', which is neither a task nor an index of this "
                                                 "experiment{}",
                                                 k, did_you_mean(k, all)));
    else if (it != e_.criteria.end())
      it->weight = w;
  }
}

// evaluation.yaml map: {criterion: the name the reports show}.
void ConfigReader::read_map() {
  std::vector<std::string> all(names_.begin(), names_.end());
  auto mp = ev_["map"];
  if (!mp || !mp.IsMap()) return;
  for (const auto &kv : mp) {
    std::string k = kv.first.Scalar();
    auto it = criterion(k);
    if (it == e_.criteria.end() && names_.count(k) == 0)
      ctx_.error(loc(ef_, kv.first), fmt::format("map renames '{}', which is neither a task nor an index of this experiment{}", k,
                                                 did_you_mean(k, all)));
    else if (it != e_.criteria.end())
      it->display = scalar(kv.second);
  }
}

// llm_parameters.yaml evaluation: the judge's model (label, api), inference and prompt file.
void ConfigReader::read_judge() {
  const std::string pf = (e_.config_dir / "llm_parameters.yaml").string();
  YAML::Node lp = load(ctx_, pf, true, "create it with evaluation: {label, api: {url, auth}, inference, prompt_yaml_file}");
  YAML::Node evn = lp && lp.IsMap() ? lp["evaluation"] : YAML::Node();
  if (lp && (!evn || !evn.IsMap())) {
    ctx_.error(loc(pf, lp), "llm_parameters.yaml needs an `evaluation:` mapping (label, api, inference, prompt_yaml_file)");
    return;
  }
  if (!evn) return;
  check_keys(ctx_, pf, evn, {"label", "model", "api", "inference", "prompt_yaml_file"}, "llm_parameters.yaml evaluation");
  e_.judge_provider = provider_block(ctx_, e_, pf, evn, "judge (llm_parameters.yaml)");
  if (auto inf = evn["inference"]) {
    if (!inf.IsMap()) ctx_.error(loc(pf, inf), "inference must be a mapping (temperature, top_p, ...)");
    else e_.judge_inference = to_json(inf);
  }
  read_system_prompts(pf, evn);
}

// The prompt file (prompt_yaml_file, default config/llm_system_prompts.yaml): system_prompts the judges need.
void ConfigReader::read_system_prompts(const std::string &pf, const YAML::Node &evn) {
  std::string prompt_file = evn["prompt_yaml_file"] ? scalar(evn["prompt_yaml_file"]) : "config/llm_system_prompts.yaml";
  fs::path pp = project_path(e_, prompt_file);
  if (!fs::exists(pp) && fs::exists(e_.config_dir / fs::path(prompt_file).filename())) pp = e_.config_dir / fs::path(prompt_file).filename();
  if (!fs::exists(pp)) {
    ctx_.error(loc(pf, evn["prompt_yaml_file"] ? evn["prompt_yaml_file"] : evn),
               fmt::format("the prompt file '{}' does not exist (resolved against {}); create it with system_prompts: "
                           "{{evaluate_hallucination, evaluate_task_comparison}}",
                           prompt_file, e_.project_dir.string()));
    return;
  }
  YAML::Node sp = load(ctx_, pp, true, "");
  YAML::Node m = sp && sp.IsMap() ? sp["system_prompts"] : YAML::Node();
  if (sp && (!m || !m.IsMap())) {
    ctx_.error(loc(pp.string(), sp), "the prompt file needs a `system_prompts:` mapping");
    return;
  }
  if (!m) return;
  for (const auto &kv : m) e_.system_prompts[kv.first.Scalar()] = scalar(kv.second);
  bool has_task = false, has_hall = false;
  for (const auto &c : e_.criteria) {
    has_task = has_task || c.is_task;
    has_hall = has_hall || c.node_type == "index.llm_hallucination";
  }
  if (has_task && !e_.system_prompts.count("evaluate_task_comparison"))
    ctx_.error(loc(pp.string(), m), "system_prompts has no evaluate_task_comparison (with {prompt_input_1} = original, {prompt_input_2} = criterion)");
  if (has_hall && !e_.system_prompts.count("evaluate_hallucination"))
    ctx_.error(loc(pp.string(), m), "system_prompts has no evaluate_hallucination (with {prompt_input} = original)");
}

// The data files' columns: the input column, and each manual transformation's column.
void ConfigReader::check_data_columns() {
  std::set<std::string> reserved = {"data_file", "row", "transformation", "transformation_label"};
  if (reserved.count(e_.input_column))
    ctx_.error(e_.input_column_where, fmt::format("input_column_name '{}' is a reserved field name; rename the column", e_.input_column));
  for (const auto &d : e_.data_files) {
    try {
      Table t = read_table(d.path, e_.csv_separator);
      auto has = [&](const std::string &c) { return std::find(t.header.begin(), t.header.end(), c) != t.header.end(); };
      std::string cols = t.header.empty() ? "(none)" : fmt::format("{}", fmt::join(t.header, ", "));
      if (!has(e_.input_column))
        ctx_.error({d.path.string(), 1, 1},
                   fmt::format("the data file has no input column '{}' (input_column_name, {}); its columns: {}{} — rename the "
                               "column, set input_column_name, or check csv_separator ('{}')",
                               e_.input_column, e_.input_column_where.str(), cols, did_you_mean(e_.input_column, t.header),
                               e_.csv_separator));
      for (const auto &tr : e_.transformations)
        if (!tr.column.empty() && !has(tr.column))
          ctx_.error({d.path.string(), 1, 1}, fmt::format("transformation '{}' (manual) reads column '{}', which this data file "
                                                          "lacks; its columns: {}", tr.id, tr.column, cols));
    } catch (const std::exception &x) {
      ctx_.error({d.path.string(), 0, 0}, std::string("cannot read the data file: ") + x.what());
    }
  }
}

}  // namespace

Experiment load_experiment(const fs::path &config_dir, const PluginRegistry &reg, bool only_transform) {
  return ConfigReader(config_dir, reg).read(only_transform);
}

}  // namespace evalgraph::chatbot
