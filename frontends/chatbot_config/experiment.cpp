#include "chatbot_config/experiment.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <xlsxwriter.h>
#include <yaml-cpp/yaml.h>

#include <ctime>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config/pipeline.h"
#include "config/yaml_guard.h"
#include "entry/run_entry.h"
#include "evalgraph/json_bounded.hpp"
#include "llm/llm_service.h"
#include "run_folder/run_folder.h"
#include "util/atomic_file.h"
#include "util/json_file.h"

namespace evalgraph::chatbot {
namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// ---- YAML output of the generated pipeline -------------------------------------------------------------

bool literal_ok(const std::string &s) {
  if (s.find('\n') == std::string::npos || s.find('\r') != std::string::npos || s.find('\t') != std::string::npos) return false;
  if (s.empty() || s[0] == ' ') return false;
  // Round trip: the literal block must read back as exactly this string.
  YAML::Emitter em;
  em << YAML::BeginMap << YAML::Key << "k" << YAML::Value << YAML::Literal << s << YAML::EndMap;
  try {
    return YAML::Load(em.c_str())["k"].Scalar() == s;
  } catch (...) {
    return false;
  }
}

// Identifier-like text that YAML reads back as the same string when written plain.
bool plain_ok(const std::string &s) {
  static const std::regex re(R"(^[A-Za-z_][A-Za-z0-9_./-]*$)");
  static const std::set<std::string> special = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"};
  std::string low = s;
  for (auto &c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::regex_match(s, re) && special.count(low) == 0;
}

void emit(YAML::Emitter &em, const ordered_json &j) {
  if (j.is_object()) {
    em << YAML::BeginMap;
    for (const auto &[k, v] : j.items()) {
      em << YAML::Key;
      if (plain_ok(k)) em << k;
      else em << YAML::DoubleQuoted << k;
      em << YAML::Value;
      emit(em, v);
    }
    em << YAML::EndMap;
  } else if (j.is_array()) {
    em << YAML::BeginSeq;
    for (const auto &v : j) emit(em, v);
    em << YAML::EndSeq;
  } else if (j.is_string()) {
    const std::string &s = j.get_ref<const std::string &>();
    if (plain_ok(s)) em << s;
    else if (literal_ok(s)) em << YAML::Literal << s;
    else em << YAML::DoubleQuoted << s;
  } else if (j.is_boolean()) {
    em << (j.get<bool>() ? "true" : "false");
  } else if (j.is_null()) {
    em << YAML::Null;
  } else {
    em << j.dump();
  }
}

std::string timestamp() { return fmt::format("{:%Y%m%d-%H%M%S}", fmt::localtime(std::time(nullptr))); }

void require_plugins(const PluginRegistry &reg, const std::vector<std::string> &names) {
  std::vector<Diagnostic> d;
  for (const auto &n : names)
    if (reg.find(n) == nullptr)
      d.push_back({{builtin_plugin_dir().string(), 0, 0},
                   fmt::format("the plugin for node type '{}' is not loaded; build the bundled plugins or add their folder "
                               "with --plugin-dir",
                               n)});
  if (!d.empty()) throw ConfigError(std::move(d));
}

}  // namespace

std::size_t write_dataset(const Experiment &e, const fs::path &file) {
  std::vector<std::string> manual_cols;
  for (const auto &t : e.transformations)
    if (!t.column.empty() && std::find(manual_cols.begin(), manual_cols.end(), t.column) == manual_cols.end() &&
        t.column != e.input_column)
      manual_cols.push_back(t.column);
  std::vector<Table> tables;
  for (const auto &d : e.data_files) tables.push_back(read_table(d.path, e.csv_separator));
  std::string out;
  std::size_t n = 0;
  for (const auto &t : e.transformations) {
    for (std::size_t f = 0; f < e.data_files.size(); ++f) {
      const Table &tab = tables[f];
      auto col = [&](const std::string &name) {
        return static_cast<std::size_t>(std::find(tab.header.begin(), tab.header.end(), name) - tab.header.begin());
      };
      std::size_t in = col(e.input_column);
      for (std::size_t r = 0; r < tab.rows.size(); ++r) {
        const auto &row = tab.rows[r];
        std::string text = in < row.size() ? row[in] : "";
        if (text.find_first_not_of(" \t\r\n") == std::string::npos) continue;  // empty input: nothing to transform
        ordered_json rec;
        rec["data_file"] = e.data_files[f].name;
        rec["row"] = r + 1;
        rec["transformation"] = t.id;
        rec["transformation_label"] = t.label;
        rec[e.input_column] = text;
        for (const auto &m : manual_cols) {
          std::size_t c = col(m);
          rec[m] = c < row.size() ? row[c] : "";
        }
        out += rec.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
        ++n;
      }
    }
  }
  write_file_atomically(file, out);
  return n;
}

namespace {

// The generated pipeline, part by part: the transformations (a chain t_<id>), the criteria (task_<slug> judges
// and idx_<slug> indices), the score, and the chatbot.report sink.
class PipelineBuilder {
 public:
  PipelineBuilder(const Experiment &e, const PluginRegistry &reg, bool only_transform)
      : e_(e), reg_(reg), only_transform_(only_transform), judge_(!only_transform && e.needs_judge()) {
    if (judge_) providers_["judge"] = e.judge_provider;
  }

  ordered_json build(const fs::path &results_root) {
    ordered_json p;
    p["name"] = e_.experiment_name;
    p["description"] = fmt::format("generated by `evalgraph run --config-dir` from {}", e_.config_dir.string());
    p["dataset"] = {{"path", "dataset.jsonl"}, {"format", "jsonl"}};
    p["replications"] = e_.replications;
    const std::string transformed = add_transformations() + ".text";
    if (!only_transform_) add_criteria(transformed);
    const bool score = has_score();
    if (score) nodes_.push_back({{"id", "score"}, {"uses", "chatbot.score"}, {"inputs", score_inputs_}, {"with", {{"criteria", score_criteria_}}}});
    if (!providers_.empty()) p["providers"] = providers_;
    p["nodes"] = nodes_;
    p["sinks"] = ordered_json::array({{{"uses", "chatbot.report"}, {"with", report_params(transformed, score)}}});
    p["output"] = {{"dir", results_root.string()}};
    return p;
  }

 private:
  std::string unique_id(const std::string &base) {
    std::string id = base;
    for (int k = 2; !ids_.insert(id).second; ++k) id = base + "_" + std::to_string(k);
    return id;
  }

  // Each transformation reads the input column (manual: its column) and the previous one's text; returns the
  // last one's id.
  std::string add_transformations() {
    std::string prev;
    for (const auto &t : e_.transformations) {
      std::string id = unique_id("t_" + slug(t.id));
      ordered_json n = {{"id", id}, {"uses", t.plugin}};
      ordered_json inputs = ordered_json::object();
      if (t.plugin == "transform.manual") inputs["text"] = t.column;
      else inputs["original"] = e_.input_column;
      inputs["transformation"] = "transformation";
      if (!prev.empty()) inputs["previous"] = prev + ".text";
      n["inputs"] = inputs;
      ordered_json with = t.with;
      with["transformation"] = t.id;
      if (t.plugin == "transform.llm") {
        std::string prov = "model_" + slug(t.id);
        providers_[prov] = t.provider;
        with["provider"] = prov;
      }
      n["with"] = with;
      nodes_.push_back(n);
      prev = id;
    }
    return prev;
  }

  void add_criteria(const std::string &transformed) {
    int port = 0;
    for (const auto &c : e_.criteria) {
      std::string id = unique_id((c.is_task ? "task_" : "idx_") + slug(c.name));
      ordered_json n = c.is_task ? task_node(c, id) : index_node(c, id);
      n["inputs"] = {{"original", e_.input_column}, {"transformed", transformed}};
      if (ordered_json with = c.is_task ? task_params(c) : index_params(c); !with.empty()) n["with"] = with;
      nodes_.push_back(n);
      criteria_.push_back({{"name", c.name}, {"display", c.display}, {"field", id}, {"kind", c.is_task ? "task" : "index"}});
      if (port < 48) {
        std::string pn = fmt::format("c{:02d}", ++port);
        score_inputs_[pn] = id;
        score_criteria_.push_back({{"port", pn}, {"name", c.name}, {"weight", c.weight}});
      }
    }
  }

  static ordered_json task_node(const Criterion &, const std::string &id) { return {{"id", id}, {"uses", "judge.task_comparison"}}; }
  static ordered_json index_node(const Criterion &c, const std::string &id) { return {{"id", id}, {"uses", c.node_type}}; }

  ordered_json task_params(const Criterion &c) const {
    ordered_json with = {{"task", c.name}, {"criterion", c.description}, {"provider", "judge"},
                         {"system_prompt", e_.system_prompts.at("evaluate_task_comparison")}};
    if (!e_.judge_inference.empty()) with["inference"] = e_.judge_inference;
    return with;
  }

  // An index that talks to the judge gets the judge's provider, inference and prompts when its schema asks for them.
  ordered_json index_params(const Criterion &c) const {
    const NodeTypeInfo *ti = reg_.find(c.node_type);
    const json props = ti != nullptr ? ti->params_schema.value("properties", json::object()) : json::object();
    ordered_json with = ordered_json::object();
    if (judge_ && props.contains("provider")) with["provider"] = "judge";
    if (judge_ && props.contains("inference") && !e_.judge_inference.empty()) with["inference"] = e_.judge_inference;
    if (judge_ && props.contains("system_prompts") && !e_.system_prompts.empty()) {
      ordered_json sp = ordered_json::object();
      for (const auto &[k, v] : e_.system_prompts) sp[k] = v;
      with["system_prompts"] = sp;
    }
    return with;
  }

  bool has_score() const {
    bool weighted = false;
    for (const auto &c : e_.criteria) weighted = weighted || c.weight > 0;
    return weighted && !only_transform_ && !e_.criteria.empty() && e_.criteria.size() <= 48;
  }

  ordered_json report_params(const std::string &transformed, bool score) const {
    ordered_json trs = ordered_json::array();
    for (const auto &t : e_.transformations) trs.push_back({{"id", t.id}, {"label", t.label}});
    ordered_json sink = {{"experiment_name", e_.experiment_name},
                         {"input_column", e_.input_column},
                         {"output_column", e_.output_column},
                         {"csv_separator", e_.csv_separator},
                         {"only_transform", only_transform_},
                         {"transformations", trs},
                         {"criteria", criteria_},
                         {"fields", {{"original", e_.input_column}, {"transformed", transformed}}}};
    if (score) sink["score"] = {{"field", "score"}};
    return sink;
  }

  const Experiment &e_;
  const PluginRegistry &reg_;
  const bool only_transform_, judge_;
  ordered_json providers_ = ordered_json::object(), nodes_ = ordered_json::array(), criteria_ = ordered_json::array(),
               score_criteria_ = ordered_json::array(), score_inputs_ = ordered_json::object();
  std::set<std::string> ids_ = {"score"};
};

}  // namespace

std::string generate_pipeline_yaml(const Experiment &e, const PluginRegistry &reg, bool only_transform,
                                   const fs::path &results_root) {
  ordered_json p = PipelineBuilder(e, reg, only_transform).build(results_root);
  YAML::Emitter em;
  em.SetOutputCharset(YAML::EmitNonAscii);
  emit(em, p);
  return "# Generated from the configuration folder " + e.config_dir.string() +
         " by `evalgraph run --config-dir`.\n# It is the pipeline this run executed; the dataset is dataset.jsonl "
         "(data rows x transformations).\n" +
         std::string(em.c_str()) + "\n";
}

RunResult run_experiment(const RunSettings &s, const PluginRegistry &reg) {
  Experiment e = load_experiment(s.config_dir, reg, s.only_transform);
  std::vector<std::string> needed = {"chatbot.report"};
  for (const auto &t : e.transformations) needed.push_back(t.plugin);
  if (!s.only_transform) {
    if (e.needs_judge()) needed.push_back("judge.task_comparison");
    needed.push_back("chatbot.score");
  }
  require_plugins(reg, needed);
  fs::path root = s.results_root.empty() ? e.project_dir / "results" : fs::absolute(s.results_root);
  fs::path run_dir = run_folder::new_run_dir(e.experiment_name, root);
  fs::create_directories(run_dir);
  try {
    write_dataset(e, run_dir / "dataset.jsonl");
    Pipeline p = parse_pipeline(generate_pipeline_yaml(e, reg, s.only_transform, root), run_folder::pipeline_copy(run_dir));
    RunRequest req;
    req.opt.run_dir = run_dir;
    req.opt.jobs = std::max(1, s.jobs);
    req.opt.chunk_size = 16;  // LLM-bound: small chunks keep every worker busy
    req.opt.progress = s.progress;
    req.report = s.report;
    req.no_cache = s.no_cache;
    req.cache_path = s.cache_path;
    req.stderr_level = s.stderr_level;
    req.on_host = s.on_host;
    return run_pipeline(p, reg, req);  // the entry of `evalgraph run`
  } catch (const ConfigError &) {
    std::error_code ec;
    fs::remove_all(run_dir, ec);  // nothing was run: leave no empty results folder behind
    throw;
  }
}

// ---- combine-experiments -------------------------------------------------------------------------------
// The folders' detailed_results.jsonl rows (transformations renamed per folder) become the dataset of a
// pipeline with no nodes and one chatbot.report sink in rows mode, run through the entry of `evalgraph run`:
// the combined folder is a results folder like any other (pipeline.yaml, run.json, the report's files).

namespace {

constexpr const char *kCombinedRows = "combined_rows.jsonl";

// Every folder under results_root with a finished experiment (detailed_results.jsonl and report.json).
std::vector<fs::path> experiment_folders(const fs::path &results_root) {
  std::vector<fs::path> folders;
  if (fs::is_directory(results_root))
    for (const auto &d : fs::directory_iterator(results_root))
      if (d.is_directory() && d.path().filename() != "combined_experiments" && fs::exists(d.path() / "detailed_results.jsonl") &&
          fs::exists(d.path() / "report.json"))
        folders.push_back(d.path());
  std::sort(folders.begin(), folders.end());
  if (folders.empty())
    throw ConfigError({{{results_root.string(), 0, 0}, "no experiment results found here (folders with detailed_results.jsonl "
                                                       "and report.json); run an experiment first or name the folders"}});
  return folders;
}

// Each folder's report.json; refuses unfinished folders and folders whose column names differ from the first's.
std::vector<json> read_report_configs(const std::vector<fs::path> &folders) {
  std::vector<Diagnostic> diags;
  std::vector<json> cfgs;
  for (const auto &f : folders) {
    fs::path rj = f / "report.json";
    json j;
    if (fs::exists(rj) && !read_json_file_bounded(rj, j)) j = json(json::value_t::discarded);
    if (!fs::exists(f / "detailed_results.jsonl") || j.is_discarded() || !j.is_object()) {
      diags.push_back({{f.string(), 0, 0}, "not a finished experiment folder (needs report.json and detailed_results.jsonl "
                                           "written by `evalgraph run --config-dir`)"});
      cfgs.push_back(json::object());
      continue;
    }
    cfgs.push_back(j);
  }
  if (!diags.empty()) throw ConfigError(diags);
  const std::string in0 = cfgs[0].value("input_column_name", ""), out0 = cfgs[0].value("output_column_name", "");
  for (std::size_t i = 1; i < cfgs.size(); ++i) {
    std::string in = cfgs[i].value("input_column_name", ""), out = cfgs[i].value("output_column_name", "");
    if (in != in0 || out != out0)
      diags.push_back({{folders[i].string(), 0, 0},
                       fmt::format("its input/output column names ('{}'/'{}') differ from those of {} ('{}'/'{}'); only "
                                   "experiments with the same input_column_name and output_column_name can be combined",
                                   in, out, folders[0].string(), in0, out0)});
  }
  if (!diags.empty()) throw ConfigError(diags);
  return cfgs;
}

// What the combined report shows: every folder's transformations (named "<experiment>: <label>", ids
// "<folder>/<id>"), the criteria of all, and per folder the renaming of its transformation ids.
struct Combined {
  json params;  // chatbot.report's parameters (rows mode)
  std::vector<std::map<std::string, std::pair<std::string, std::string>>> rename;  // folder → id → (id, label)
};

Combined combined_report(const std::vector<fs::path> &folders, const std::vector<json> &cfgs) {
  Combined c;
  c.rename.resize(folders.size());
  json trs = json::array(), crits = json::array();
  std::set<std::string> crit_names;
  std::map<std::string, int> label_count;
  bool has_score = false;
  for (std::size_t i = 0; i < folders.size(); ++i) {
    std::string exp = cfgs[i].value("experiment_name", folders[i].filename().string());
    int nth = ++label_count[exp];
    std::string prefix = nth > 1 ? fmt::format("{} #{}", exp, nth) : exp;
    for (const auto &t : cfgs[i].value("transformations", json::array())) {
      std::string id = folders[i].filename().string() + "/" + t.value("id", "");
      std::string label = prefix + ": " + t.value("label", t.value("id", ""));
      c.rename[i][t.value("id", "")] = {id, label};
      trs.push_back({{"id", id}, {"label", label}});
    }
    for (const auto &k : cfgs[i].value("criteria", json::array()))
      if (crit_names.insert(k.value("name", "")).second)
        crits.push_back({{"name", k.value("name", "")}, {"display", k.value("display", k.value("name", ""))}, {"kind", k.value("kind", "task")}});
    has_score = has_score || cfgs[i].value("has_score", false);
  }
  c.params = {{"experiment_name", "combined_experiments"}, {"input_column", cfgs[0].value("input_column_name", "")},
              {"output_column", cfgs[0].value("output_column_name", "")}, {"csv_separator", cfgs[0].value("csv_separator", ",")},
              {"mode", "rows"}, {"transformations", trs}, {"criteria", crits}};
  if (has_score) c.params["score"] = json::object();
  return c;
}

// The folders' rows, renamed, as one JSONL file (the combined run's dataset).
void write_combined_rows(const std::vector<fs::path> &folders, const Combined &c, const fs::path &file) {
  std::string out;
  for (std::size_t i = 0; i < folders.size(); ++i) {
    const fs::path src = folders[i] / "detailed_results.jsonl";
    std::ifstream in(src);
    std::string line;
    std::size_t ln = 0;
    while (std::getline(in, line)) {
      ++ln;
      if (line.empty()) continue;
      json row;
      if (!evalgraph::parse_bounded(line, row, 64) || row.is_discarded())
        throw std::runtime_error(fmt::format("{}:{}: not a JSON line", src.string(), ln));
      auto it = c.rename[i].find(row.value("transformation", ""));
      if (it != c.rename[i].end()) {
        row["transformation"] = it->second.first;
        row["transformation_label"] = it->second.second;
      }
      out += row.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    }
  }
  write_file_atomically(file, out);
}

// Runs the combined rows through chatbot.report in `dir`; a sink error is an error of the command.
void run_combined(const Combined &c, const fs::path &dir, const fs::path &results_root, const PluginRegistry &reg) {
  ordered_json p;
  p["name"] = "combined_experiments";
  p["description"] = "generated by `evalgraph combine-experiments`";
  p["dataset"] = {{"path", kCombinedRows}, {"format", "jsonl"}};
  p["sinks"] = ordered_json::array({{{"uses", "chatbot.report"}, {"with", ordered_json(c.params)}}});
  p["output"] = {{"dir", results_root.string()}};
  YAML::Emitter em;
  em.SetOutputCharset(YAML::EmitNonAscii);
  emit(em, p);
  Pipeline pipeline = parse_pipeline(std::string(em.c_str()) + "\n", run_folder::pipeline_copy(dir));
  RunRequest req;
  req.opt.run_dir = dir;
  req.opt.journal = false;
  req.report = false;
  RunResult r = run_pipeline(pipeline, reg, req);
  const json sinks = r.summary.value("sinks", json::object());
  for (const auto &[id, sink] : sinks.items()) {
    if (sink.value("errors", 0) > 0) throw std::runtime_error("chatbot.report: " + sink.value("first_error", std::string()));
    if (sink.contains("result") && sink["result"].is_object() && sink["result"].contains("error"))
      throw std::runtime_error("chatbot.report: " + sink["result"]["error"].get<std::string>());
  }
}

}  // namespace

fs::path combine_experiments(const std::vector<fs::path> &folders_in, const fs::path &results_root, const PluginRegistry &reg) {
  require_plugins(reg, {"chatbot.report"});
  const std::vector<fs::path> folders = folders_in.empty() ? experiment_folders(results_root) : folders_in;
  const std::vector<json> cfgs = read_report_configs(folders);
  fs::path dir = results_root / "combined_experiments" / timestamp();
  for (int k = 2; fs::exists(dir); ++k) dir = results_root / "combined_experiments" / (timestamp() + "-" + std::to_string(k));
  fs::create_directories(dir);
  const Combined c = combined_report(folders, cfgs);
  write_combined_rows(folders, c, dir / kCombinedRows);
  run_combined(c, dir, results_root, reg);
  json sources = json::array();
  for (const auto &f : folders) sources.push_back(fs::absolute(f).string());
  write_file_atomically(dir / "sources.json", json{{"combined", sources}}.dump(2) + "\n");
  return dir;
}

// ---- create-dataset ------------------------------------------------------------------------------------

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
