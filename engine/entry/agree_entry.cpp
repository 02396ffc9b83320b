#include "entry/agree_entry.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "agree/agreement.h"
#include "config/pipeline.h"
#include "expect/expectations.h"
#include "graph/plan.h"
#include "report/default_report.h"
#include "run_folder/run_folder.h"
#include "util/json_file.h"
#include "util/raw_json.h"

namespace evalgraph {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The run's pipeline as it was run, with --agreement's entries in place of its own.
Pipeline run_pipeline_of(const AgreeRequest &req, const json &info) {
  const fs::path original = info.value("pipeline_file", run_folder::pipeline_copy(req.run_dir).string());
  Pipeline p = parse_pipeline(run_folder::pipeline_text(req.run_dir), original);
  std::vector<Diagnostic> diags;
  const Location cli{"--agreement", 0, 0};
  if (!req.entries.empty()) p.agreement.clear();
  for (const auto &e : req.entries) {
    AgreementDecl d;
    const auto tilde = e.find('~');
    d.metric = e.substr(0, tilde);
    d.label = tilde == std::string::npos ? "" : e.substr(tilde + 1);
    if (tilde == std::string::npos || d.label.empty() || !split_metric(d.metric, d.node, d.path))
      diags.push_back({cli, fmt::format("'{}' is not METRIC~LABEL (e.g. --agreement judge.verdict~faithful)", e)});
    d.at = d.metric_at = d.label_at = cli;
    p.agreement.push_back(std::move(d));
  }
  if (!p.labels.declared)
    diags.push_back({p.where,
                     "the run's pipeline declares no labels: add labels: {path, key, fields} to it (evalgraph "
                     "agree takes the key, annotator column and fields from there; --labels replaces the path)"});
  for (const auto &a : p.agreement)
    if (p.labels.declared && !a.label.empty() && p.labels.field(a.label) == nullptr)
      diags.push_back({a.label_at, fmt::format("agreement '{}': '{}' is not a label field{}; labels.fields: {}",
                                               a.display(), a.label, did_you_mean(a.label, p.labels.field_names()),
                                               join_list(p.labels.field_names()))});
  if (!diags.empty()) throw ConfigError(std::move(diags));
  return p;
}

}  // namespace

AgreeResult agree_run(const AgreeRequest &req) {
  const auto start = std::chrono::steady_clock::now();
  if (!fs::is_directory(req.run_dir))
    throw ConfigError({{{req.run_dir.string(), 0, 0}, "no such folder (give a results folder of `evalgraph run`)"}});
  if (!run_folder::finished(req.run_dir))
    throw ConfigError({{{req.run_dir.string(), 0, 0},
                        "not a finished run: no run.json in it (finish it with "
                        "`evalgraph run --resume`)"}});
  json info;
  std::string why;
  if (!read_json_file_bounded(run_folder::summary(req.run_dir), info, 64, &why) || !info.is_object())
    throw std::runtime_error(fmt::format("{}: {}", run_folder::summary(req.run_dir).string(),
                                         why.empty() ? "not a JSON object; the run folder is damaged" : why));
  Pipeline p = run_pipeline_of(req, info);
  const fs::path records = records_file_of(req.run_dir, info);
  if (records.empty())
    throw std::runtime_error(
        fmt::format("{}: the run wrote no records file (detailed.jsonl); add sink.jsonl to the "
                    "pipeline's sinks",
                    req.run_dir.string()));
  // A labels file is read on a thread of its own while this one gathers the records (the two files are read side
  // by side; the labels are attached by key at the end): about half the wall time on a million records.
  auto labels = std::make_shared<agree::LabelSet>(p.labels);  // without a file: the records' own fields
  std::vector<Diagnostic> label_diags;
  std::thread label_reader;
  if (!req.labels_file.empty() || !p.labels.path.empty())
    label_reader = std::thread([&] { read_labels(*labels, p, req.labels_file, label_diags); });
  struct Join {
    std::thread &t;
    ~Join() {
      if (t.joinable()) t.join();
    }
  } join{label_reader};
  agree::AgreementSet set(p, labels);
  set.set_annotate(false);
  set.defer_labels();
  std::ifstream in(records, std::ios::binary);
  if (!in) throw std::runtime_error(records.string() + ": cannot open");
  std::string line;
  std::size_t index = 0, lineno = 0;
  std::vector<rawjson::Member> members;
  while (std::getline(in, line)) {
    if (++lineno == 1) {  // the first record's size tells about how many there are
      std::error_code ec;
      const auto bytes = fs::file_size(records, ec);
      if (!ec) set.reserve(static_cast<std::size_t>(static_cast<double>(bytes) / static_cast<double>(line.size() + 1) * 1.1));
    }
    if (line.empty()) continue;
    // Replications of a record follow each other; _replication > 0 continues the record before.
    bool continues = false;
    if (line.find("\"_replication\"") != std::string::npos && rawjson::object_members(line, members))
      for (const auto &m : members)
        if (m.key == "_replication") continues = std::string_view(line).substr(m.value.off, m.value.len) != "0";
    if (!continues && lineno > 1) ++index;
    set.observe(line, index);
  }
  if (label_reader.joinable()) label_reader.join();
  if (!label_diags.empty()) throw ConfigError(std::move(label_diags));
  AgreeResult r;
  r.agreement = set.evaluate();
  r.agreement["records_file"] = records.filename().string();
  r.pipeline_name = p.name;
  bool gates =
      std::any_of(p.expect.begin(), p.expect.end(), [](const ExpectDecl &d) { return !d.label_field.empty(); });
  if (gates) {
    std::vector<ExpectDecl> only;
    for (const auto &d : p.expect)
      if (!d.label_field.empty()) only.push_back(d);
    ExpectationSet ex(only);
    r.verdict = ex.evaluate(&r.agreement);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace evalgraph
