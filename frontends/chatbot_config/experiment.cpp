// The run of a configuration folder (`evalgraph run --config-dir`): dataset.jsonl, the generated pipeline, the run.
// combine-experiments: combine.cpp; create-dataset: create_dataset.cpp.
#include "chatbot_config/experiment.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <ctime>
#include <fstream>
#include <regex>
#include <set>

#include "chatbot_config/experiment_internal.h"
#include "entry/results_entry.h"
#include "entry/run_entry.h"
#include "util/atomic_file.h"

namespace evalgraph::chatbot {
namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;
using detail::emit;
using detail::require_plugins;

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

}  // namespace

namespace detail {

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

}  // namespace detail

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

}  // namespace evalgraph::chatbot
