#pragma once
// People's labels (pipeline `labels:`, docs/agreement.md): read from a file of their own (JSONL or CSV, one row per
// record, or per record and person with an annotator column) or taken from the records' own fields (a list value
// holds one label per person). Every label is coded for the statistics: binary 0/1, ordinal and category the
// index of the declared value, number the number. A labels file is checked whole before any record moves: an
// unknown column, a value of the wrong type or off the declared values, a record labelled twice by one person
// → ConfigError naming the file, line and column.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/pipeline.h"

namespace evalgraph::agree {

// One person's label of one field of one record.
struct Label {
  std::uint32_t field = 0;      // index into LabelsDecl::fields
  std::uint32_t annotator = 0;  // index into LabelSet::annotators()
  double code = 0;
};

// A label value as JSON text coded for `f` (a CSV cell comes as a JSON string: "3", "yes"). Missing (null, "") →
// nullopt with `why` empty; a value that does not fit → nullopt with `why` saying what is wrong.
std::optional<double> code_label(const LabelFieldDecl &f, std::string_view json_text, std::string &why);
// The value a code stands for, as the labels file writes it (true/false, the declared value, the number).
nlohmann::json label_value(const LabelFieldDecl &f, double code);
// A record's key as text: a JSON string's content, any other value's JSON text ("12" and 12 are one key).
std::string key_text(std::string_view json_text);

class LabelSet {
 public:
  explicit LabelSet(const LabelsDecl &decl);
  const LabelsDecl &decl() const { return decl_; }
  bool from_records() const { return decl_.path.empty(); }
  // Reads a labels file (decl().path, or `file` in its place: `evalgraph agree --labels`). Throws ConfigError
  // with every problem found (at most 20 listed).
  void read_file(const std::filesystem::path &file);
  // Checks the label fields of the data set's records (labels kept as record fields) before the run; throws
  // ConfigError like read_file.
  void check_dataset(const DatasetDecl &ds, const io::RecordLimits &limits) const;
  // The labels of one record: from the file by the record's key, or from the record's own fields. `members`
  // are the record's top-level members (spans into `record`). Appends to `out`; returns false when the record
  // has no key (file mode).
  bool labels_of(std::string_view record, const std::vector<rawjson::Member> &members, std::vector<Label> &out,
                 std::string *key = nullptr);
  // File mode: the labels of the record with this key (appends to `out`; a key the file lacks adds none).
  void labels_of_key(const std::string &key, std::vector<Label> &out);
  // Marks a key as seen in the data (the rest are counted as labels for records not in the data set).
  std::size_t keys() const { return index_.size(); }
  std::size_t keys_seen() const { return seen_; }
  const std::vector<std::string> &annotators() const { return annotators_; }
  // The `_labels` value of a record's labels: {"field": [{"annotator": "a", "value": v}, ...]}.
  std::string labels_json(const std::vector<Label> &labels) const;
  // Records whose labels could not be read from their own fields (record mode during `agree`), with the first why.
  std::size_t invalid() const { return invalid_; }
  const std::string &first_invalid() const { return first_invalid_; }

 private:
  std::uint32_t annotator_id(const std::string &name);
  void add_row(std::string_view text, const std::vector<rawjson::Member> &members, std::size_t line,
               const std::filesystem::path &file, std::vector<Diagnostic> &diags);

  LabelsDecl decl_;
  std::vector<std::string> annotators_;
  std::unordered_map<std::string, std::uint32_t> annotator_ids_;
  void index_rows(const std::filesystem::path &file, std::vector<Diagnostic> &diags);

  // File mode: key → its record's number; the labels of record r are labels_[offsets_[r] .. offsets_[r + 1]), laid
  // out once the file is read (read_: as read); whether a record of the data had it.
  std::unordered_map<std::string, std::uint32_t> index_;
  std::vector<const std::string *> keys_;  // by record number (the map's keys)
  struct RowRead {
    std::uint32_t row, annotator, line;
  };
  std::vector<RowRead> rows_read_;  // each row of the file: whose, which record (a person twice is an error)
  std::vector<std::pair<std::uint32_t, Label>> read_;
  std::vector<Label> labels_;
  std::vector<std::uint32_t> offsets_;
  std::vector<std::uint8_t> seen_flag_;
  std::uint32_t next_row_ = 0;  // labels_of: the record it expects next
  std::size_t seen_ = 0;
  std::size_t invalid_ = 0;
  std::string first_invalid_;
  bool jsonl_ = true;  // the labels file is JSON lines (its messages can name a column)
  std::string annotator_column_;  // the file's annotator column: decl's, or "annotator" when the file has one
};

}  // namespace evalgraph::agree
