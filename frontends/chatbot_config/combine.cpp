// combine-experiments (experiment.h).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>

#include "chatbot_config/experiment.h"
#include "chatbot_config/experiment_internal.h"
#include "entry/results_entry.h"
#include "entry/run_entry.h"
#include "evalgraph/json_bounded.hpp"
#include "util/atomic_file.h"
#include "util/json_file.h"

namespace evalgraph::chatbot {
namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;
using detail::emit;
using detail::require_plugins;
using detail::timestamp;

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

}  // namespace evalgraph::chatbot
