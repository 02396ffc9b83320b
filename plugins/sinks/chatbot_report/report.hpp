// The reports of a chatbot evaluation (seed 004), as a library: rows stream in, files come out.
//
// A row (one transformed text of one data row in one replication) is normalised to
//   {"experiment", "data_file", "row", "transformation", "transformation_label", "replication",
//    "original", "transformed", "criteria": {name: {"value": number|null, "valid": bool, "raw"?: text}},
//    "score": number|null, "errors": {node: message}}
// and written at once to detailed_results.{csv,xlsx,jsonl}. Aggregates are kept per transformation ×
// criterion × replication (sum, count), so memory does not grow with the number of rows. finish() writes
// summary.md, summary.{csv,xlsx}, summary.png and summary_statistics_replications.{csv,xlsx}, each as
// "<file>.partial" renamed when complete.
//
// Statistics over replications (per transformation and criterion): every replication contributes the mean
// of its rows' values (rows without a value — invalid verdict, failed node — are left out and counted);
// summary.* report the mean, min and max of these replication means; the statistics file adds n (number of
// replications with a value), the sample standard deviation (n − 1) and the 95 % t-interval of the mean,
// mean ± t(0.975, n−1) · sd / √n (empty for n < 2).
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace chatbot_report {

using nlohmann::json;

struct CriterionSpec {
  std::string name;     // as in the configuration (llm_tasks.yaml title or index name)
  std::string display;  // after `map`
  std::string field;    // record field holding the node's output (pipeline mode)
  std::string kind;     // "task" or "index"
};

struct TransformationSpec {
  std::string id, label;
};

struct ReportConfig {
  std::filesystem::path output_dir;
  std::string experiment_name = "experiment";
  std::string input_column = "Original", output_column = "Transformed";
  char separator = ',';
  bool rows_mode = false;       // process() receives normalised rows (combine-experiments)
  bool only_transform = false;  // detailed results only
  std::vector<TransformationSpec> transformations;
  std::vector<CriterionSpec> criteria;
  bool has_score = false;
  std::string score_field = "score";
  std::string original_field, transformed_field = "transformed";
  std::string transformation_field = "transformation", data_file_field = "data_file", row_field = "row";
  int chart_width = 1200, chart_height = 700;
};

// One statistic over replications.
struct RepStats {
  std::size_t n = 0;  // replications with at least one value
  double mean = 0, min = 0, max = 0;
  std::optional<double> sd, ci_low, ci_high;
};
RepStats rep_stats(const std::vector<double> &replication_means);

// The chart (chart.cpp): bars = means, whiskers = min..max, one colour per transformation.
struct ChartSeries {
  std::string label;
  std::vector<std::optional<RepStats>> values;  // per category
};
void write_chart_png(const std::filesystem::path &file, const std::string &title, const std::vector<std::string> &categories,
                     const std::vector<ChartSeries> &series, const std::string &footnote, int width, int height);

class Report {
 public:
  explicit Report(ReportConfig cfg);
  ~Report();
  // A finished record (pipeline mode) or a normalised row (rows mode).
  void add(const json &record);
  // Writes the summaries and closes everything; returns the files written (names relative to output_dir).
  std::vector<std::string> finish();
  json normalise(const json &record) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chatbot_report
