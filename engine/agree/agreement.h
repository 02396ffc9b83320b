#pragma once
// Agreement with people (pipeline `agreement:`, `evalgraph agree`, docs/agreement.md): each record's metric values
// and labels are gathered as records reach the sinks (a run, a resume's replay, a shard merge, or the records of a
// finished run read by `agree`), and the statistics of stats/agreement.h are computed once at the end:
//   binary/category vs binary/category  accuracy, balanced accuracy, Cohen's kappa, the confusion matrix
//                                       (binary: precision, recall, F1 of the positive class)
//   ordinal vs ordinal on one scale     also quadratically weighted kappa and the correlations
//   number vs binary                    AUROC, the threshold that maximises balanced accuracy, and that balanced
//                                       accuracy cross-validated (stratified 5-fold)
//   number/ordinal vs number/ordinal    Spearman's rho, Kendall's tau-b, Pearson's r
// With several annotators the metric meets their majority (binary, category; a tie is left out and counted) or
// mean (ordinal, number); each annotator meets the rest in the entry's headline statistic (the people's
// ceiling), and every label field with several annotators gets Krippendorff's alpha among the people.
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "agree/labels.h"
#include "config/pipeline.h"

namespace evalgraph::agree {

// A metric's value in one record (its replications combined: numbers averaged, booleans and texts by majority).
struct MetricValue {
  enum Type : std::uint8_t { missing, boolean, number, text, tie };
  Type type = missing;
  double num = 0;  // boolean 0/1, the number, or the text's id in the entry's texts
};

class AgreementSet {
 public:
  // The pipeline's `agreement:` entries and those its `expect:` gates name; `labels` is read already (file mode).
  AgreementSet(const Pipeline &p, std::shared_ptr<LabelSet> labels);
  // One finished record (replications of a record arrive one after the other). Not thread-safe: the writer calls it.
  // Returns the record's `_labels` value ("" when it has none), for the record as the sinks get it.
  std::string observe(std::string_view record, std::size_t index);
  // Everything the run's records say: {"labels": {...}, "entries": [...], "alpha": {...}} (docs/agreement.md).
  nlohmann::json evaluate();
  const LabelSet &labels() const { return *labels_; }
  // Whether observe() returns the records' `_labels` (a run's sinks want them; `evalgraph agree` does not).
  void set_annotate(bool on) { annotate_ = on; }
  // Room for about this many records (evalgraph agree knows the records file's size): no regrowth while gathering.
  void reserve(std::size_t records);
  // `evalgraph agree`: the labels file is read while the records are gathered (on another thread): observe() keeps
  // each record's key only, and attach_labels() looks the labels up once the file is read. File mode only.
  void defer_labels() { defer_ = !labels_->from_records(); }
  void attach_labels();

  struct Entry {
    AgreementDecl decl;
    std::uint32_t field = 0;          // the label field
    std::vector<MetricValue> values;  // per row
    std::vector<std::string> texts;   // text values, by id
    std::unordered_map<std::string, std::uint32_t> text_ids;
  };
  struct Row {
    std::string key;                            // the record's key (or "#index")
    std::uint32_t labels_at = 0, labels_n = 0;  // into labels_
    bool keyed = false;                         // the key is the record's (not "#index")
  };

 private:
  void finish_record();
  MetricValue read_metric(Entry &e, std::string_view record, const std::vector<rawjson::Member> &members);

  std::shared_ptr<LabelSet> labels_;
  std::vector<Entry> entries_;
  std::vector<Row> rows_;
  std::vector<Label> all_labels_;
  std::size_t labelled_ = 0;
  // The record being gathered: its index and each entry's value per replication.
  std::size_t current_ = static_cast<std::size_t>(-1);
  std::vector<std::vector<MetricValue>> pending_;
  std::vector<rawjson::Member> members_, inner_;
  std::string_view inner_of_;  // the object inner_ holds the members of (this record's)
  std::vector<Label> scratch_;
  bool annotate_ = true;
  bool defer_ = false;  // defer_labels()
};

// The statistics of one entry over the gathered rows (agreement_stats.cpp).
nlohmann::json evaluate_entry(const AgreementSet::Entry &e, const LabelSet &labels,
                              const std::vector<AgreementSet::Row> &rows, const std::vector<Label> &all_labels);
// Krippendorff's alpha among the annotators of each label field that has several (agreement_stats.cpp).
nlohmann::json people_alpha(const LabelSet &labels, const std::vector<AgreementSet::Row> &rows,
                            const std::vector<Label> &all_labels);

// A short table of the agreement for the terminal (evalgraph agree, the end of a run).
std::string agreement_text(const nlohmann::json &agreement);

}  // namespace evalgraph::agree
