#pragma once
// `expect:` — what must hold after a run (docs/ci.md). The checks against the plugins' declarations happen
// with the plan (`evalgraph validate` included); the values are gathered as records reach the sinks (the run,
// a resume's journal replay and a shard merge alike) and judged once, before the sinks finish, so the report
// can show the verdict. A failed expectation makes the run exit 4 (kExitExpectationFailed).
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "config/pipeline.h"
#include "plugin/registry.h"
#include "util/exit_codes.h"

namespace evalgraph {

constexpr int kExitExpectationFailed = exit_code::check_failed;

// Checks every `expect:` entry against the pipeline's nodes, their declared outputs (NodeTypeInfo::outputs,
// writes) and the dataset's columns; adds a diagnostic at the entry's line for each problem. `types` is
// parallel to p.nodes.
void check_expectations(const Pipeline &p, const std::vector<const NodeTypeInfo *> &types,
                        const std::vector<std::string> &columns, std::vector<Diagnostic> &diags);

// Checks `labels:`, `agreement:` and the `expect:` entries with `label:`: metrics that are nodes' outputs, label
// fields that are declared, the labels' key (and record-field labels) among the dataset's columns.
void check_agreement(const Pipeline &p, const std::vector<const NodeTypeInfo *> &types,
                     const std::vector<std::string> &columns, std::vector<Diagnostic> &diags);

// Gathers the values of the expectations' metrics from records as JSON text and judges them.
class ExpectationSet {
 public:
  explicit ExpectationSet(const std::vector<ExpectDecl> &decls);
  bool empty() const { return items_.empty(); }
  // One finished record (a replication counts as a record). Thread-safe.
  void observe(std::string_view record);
  // The verdict: {"passed": bool, "failed": n, "results": [{metric, stat, value, interval, n, passed, ...}]}.
  // Entries with `label:` are judged from `agreement` (agree::AgreementSet::evaluate()); null: none computed.
  nlohmann::json evaluate(const nlohmann::json *agreement = nullptr) const;

 private:
  // A value a record's field is compared with (where:, share's equals), prepared once.
  struct Want {
    nlohmann::json value;
    std::string text;  // a number or boolean as text (a CSV field is text: `year: 2024` matches "2024")
  };
  struct WherePath {
    std::string field;              // as written: a column, or node.field[.key]
    std::string first;              // its first key
    std::vector<std::string> rest;  // and the deeper ones
    std::vector<Want> any_of;
  };
  struct Item {
    const ExpectDecl *decl = nullptr;
    bool share = false;
    std::vector<WherePath> where;
    std::vector<Want> equals;
    std::vector<double> values;   // numbers (a boolean as 0/1) of the records that match `where`
    std::size_t booleans = 0;     // how many of them were booleans
    std::size_t hits = 0;         // share: values equal to `equals`
    std::size_t present = 0;      // share: records with a value (any type)
    std::size_t missing = 0;      // records that match `where` but have no value (failed, skipped, null)
    std::size_t not_numeric = 0;  // a value that is neither a number nor a boolean (a stat but share)
  };
  mutable std::mutex mu_;
  std::vector<Item> items_;
};

// The verdict as a table for the terminal, as Markdown (GitHub's step summary) and as JUnit XML.
std::string expectations_text(const nlohmann::json &verdict);
std::string expectations_markdown(const nlohmann::json &verdict, const std::string &title);
std::string expectations_junit(const nlohmann::json &verdict, const std::string &pipeline, double seconds);

// After a finished run (or merge) whose run.json holds `expectations`: prints the table to stderr (unless
// quiet), appends the Markdown to $GITHUB_STEP_SUMMARY when it is set. Returns true when all passed.
bool announce_expectations(const nlohmann::json &verdict, const std::string &pipeline, bool quiet);

}  // namespace evalgraph
