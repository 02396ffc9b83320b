// sink.csv's table: every finished record as one CSV row, node outputs flattened into "node.field" columns
// (evalgraph/csv.hpp). The file is written as `<file>.partial` and renamed to `<file>` by finish().
//
// The columns are the union of all fields seen, in first-seen order, so they are only known at the end: rows
// stream into a temporary body file ("<file>.partial.body") and finish() writes the header plus the body
// (short rows padded) into "<file>.partial". Memory stays constant whatever the number of records. With an
// explicit column list, rows go straight into "<file>.partial".
#ifndef EVALGRAPH_SINK_CSV_TABLE_HPP
#define EVALGRAPH_SINK_CSV_TABLE_HPP

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "evalgraph/output_file.hpp"

namespace csv_sink {

struct TableOptions {
  char separator = ',';
  bool bom = false;  // start with a UTF-8 byte order mark (for Excel)
  std::optional<std::vector<std::string>> columns;  // explicit columns in their order; others are left out
};

class TableWriter {
 public:
  // Creates `<file>.partial` (and the body file); throws std::invalid_argument when `columns` is empty or
  // names a column twice.
  TableWriter(const std::filesystem::path &file, const TableOptions &options);
  // One record's JSON text (its fields keep the text's order); evalgraph::InputError when it is not JSON.
  void add(std::string_view record);
  // Writes the header and the rows, then renames `<file>.partial` to `<file>`.
  void finish();
  std::size_t records() const { return records_; }
  std::size_t columns() const { return columns_.size(); }

 private:
  void write_header();
  void copy_body();

  char sep_;
  bool bom_, fixed_columns_, finished_ = false;
  std::filesystem::path body_path_;
  evalgraph::BufferedFile out_, body_;
  std::vector<std::string> columns_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::pair<std::string, std::string>> pairs_;
  std::vector<std::string> cells_;
  std::string row_;
  std::size_t records_ = 0;
};

}  // namespace csv_sink

#endif  // EVALGRAPH_SINK_CSV_TABLE_HPP
