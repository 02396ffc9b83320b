// sink.csv — writes every finished record as one CSV row, node outputs flattened into "node.field" columns.
//
// The columns are the union of all fields seen, in first-seen order, so they are only known at the end: rows
// stream into a temporary body file ("<file>.partial.body") and finish() writes the header plus the body
// (short rows padded) into "<file>.partial", then renames it to "<file>". Memory stays constant whatever the
// number of records. With an explicit `columns` list, rows go straight into "<file>.partial".
//
// A RawNode (plugin.hpp), so that records are parsed with nlohmann::ordered_json: the columns keep the
// order in which the host wrote the record's fields.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "evalgraph/csv.hpp"
#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

struct Config {
  std::string file = "records.csv";
  std::string separator = ",";
  std::optional<std::vector<std::string>> columns;
  bool bom = false;
};
const evalgraph::Params<Config> kParams{"Writes every finished record as a CSV row; node outputs become node.field columns.", {
  evalgraph::param(&Config::file, "file", "Output file, relative to the run's output directory (subfolders are created).").min_length(1),
  evalgraph::param(&Config::separator, "separator", "Field separator: one character, or \"tab\".").min_length(1).max_length(3),
  evalgraph::param(&Config::columns, "columns", "Explicit columns and their order (e.g. \"question\", \"judge.score\"); fields not listed are left out. null: every field seen, in first-seen order.").with_schema({{"minItems", 1}, {"uniqueItems", true}}),
  evalgraph::param(&Config::bom, "bom", "Start the file with a UTF-8 byte order mark so that Excel reads non-ASCII text correctly."),
}};

constexpr std::size_t kBufferSize = std::size_t{1} << 20;

using evalgraph::InputError;

std::string errno_text() { return std::strerror(errno); }

// Body file row: [uint32 number of fields][uint64 byte length][bytes of the fields, separated, no line end].
struct RowHead {
  std::uint32_t fields;
  std::uint64_t bytes;
};

class CsvSink : public evalgraph::RawNode {
 public:
  CsvSink(const evalgraph::Host &, const json &params) {
    const Config c = kParams.parse(params);
    file_ = c.file;
    std::string sep = c.separator == "tab" || c.separator == "\\t" ? "\t" : c.separator;
    if (sep.size() != 1 || sep[0] == '"' || sep[0] == '\n' || sep[0] == '\r')
      throw std::invalid_argument("parameter separator must be one character (not a quote or line break) or \"tab\"");
    sep_ = sep[0];
    bom_ = c.bom;
    if (c.columns) {
      if (c.columns->empty()) throw std::invalid_argument("parameter columns must be a non-empty list of names");
      for (const auto &name : *c.columns) {
        if (!index_.emplace(name, columns_.size()).second)
          throw std::invalid_argument("parameter columns names '" + name + "' twice");
        columns_.push_back(name);
      }
      fixed_columns_ = true;
    }

    final_ = evalgraph::sink_output_path(params, file_);
    partial_ = evalgraph::partial_path(final_);
    body_path_ = partial_;
    body_path_ += ".body";
    out_.open(partial_, "wb", kBufferSize);
    if (fixed_columns_) {
      write_header();
    } else {
      body_.open(body_path_, "w+b", kBufferSize);
    }
  }

  ~CsvSink() override {  // not finished: the .partial files stay as the trace of the run
  }

  std::string process_raw(evalgraph::Call &, std::string_view in) override {
    write(in.data(), in.size());
    return {};
  }
  json finish(evalgraph::Call &) override { return json::parse(finish_files()); }

  void write(const char *data, std::size_t len) {
    if (finished_) throw std::runtime_error("process() after finish()");
    ordered_json record;
    try {
      record = ordered_json::parse(data, data + len);
    } catch (const json::parse_error &e) {
      throw InputError(std::string("the record is not valid JSON: ") + e.what());
    }
    evalgraph::csv::flatten(record, pairs_);
    cells_.resize(columns_.size());
    for (auto &c : cells_) c.clear();
    for (auto &[name, text] : pairs_) {
      auto it = index_.find(name);
      if (it == index_.end()) {
        if (fixed_columns_) continue;
        it = index_.emplace(name, columns_.size()).first;
        columns_.push_back(name);
        cells_.emplace_back();
      }
      cells_[it->second].swap(text);
    }
    row_.clear();
    for (std::size_t i = 0; i < cells_.size(); ++i) {
      if (i > 0) row_.push_back(sep_);
      evalgraph::csv::escape_append(row_, cells_[i], sep_);
    }
    // A lone empty field would be an empty line, which CSV readers skip: write it quoted.
    if (columns_.size() == 1 && row_.empty()) row_ = "\"\"";
    if (fixed_columns_) {
      row_.push_back('\n');
      out_.write(row_);
    } else {
      RowHead head{static_cast<std::uint32_t>(cells_.size()), row_.size()};
      body_.write(&head.fields, sizeof head.fields);
      body_.write(&head.bytes, sizeof head.bytes);
      body_.write(row_);
    }
    ++records_;
  }

  std::string finish_files() {
    if (finished_) throw std::runtime_error("finish() called twice");
    finished_ = true;
    if (!fixed_columns_) {
      write_header();
      copy_body();
    }
    out_.close(true);
    fs::rename(partial_, final_);
    if (!fixed_columns_) fs::remove(body_path_);
    return json{{"files", json::array({file_})}, {"records", records_}, {"columns", columns_.size()}}.dump();
  }

 private:
  void write_header() {
    std::string line;
    if (bom_) line = "\xEF\xBB\xBF";
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) line.push_back(sep_);
      evalgraph::csv::escape_append(line, columns_[i], sep_);
    }
    line.push_back('\n');
    out_.write(line);
  }

  // Copies the body rows after the header, padding rows written before later columns appeared.
  void copy_body() {
    std::FILE *in = body_.get();
    if (std::fflush(in) != 0 || std::fseek(in, 0, SEEK_SET) != 0)
      throw std::runtime_error("cannot read back " + body_path_.string() + ": " + errno_text());
    const std::string padding(columns_.size(), sep_);
    std::string buf;
    for (std::size_t r = 0; r < records_; ++r) {
      RowHead head{};
      if (std::fread(&head.fields, sizeof head.fields, 1, in) != 1 || std::fread(&head.bytes, sizeof head.bytes, 1, in) != 1)
        throw std::runtime_error("cannot read back " + body_path_.string() + " (truncated)");
      buf.resize(head.bytes);
      if (head.bytes > 0 && std::fread(buf.data(), 1, head.bytes, in) != head.bytes)
        throw std::runtime_error("cannot read back " + body_path_.string() + " (truncated)");
      const std::size_t have = head.fields == 0 ? 1 : head.fields;  // an empty row is one empty field
      const std::size_t pad = columns_.size() > have ? columns_.size() - have : 0;
      buf.append(padding, 0, pad);
      buf.push_back('\n');
      out_.write(buf);
    }
    body_.close(false);
  }

  std::string file_;
  char sep_ = ',';
  bool bom_ = false;
  bool fixed_columns_ = false;
  bool finished_ = false;
  fs::path final_, partial_, body_path_;
  evalgraph::BufferedFile out_, body_;
  std::vector<std::string> columns_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::pair<std::string, std::string>> pairs_;
  std::vector<std::string> cells_;
  std::string row_;
  std::size_t records_ = 0;
};

}  // namespace

EVALGRAPH_PLUGIN("sink_csv", "0.1.0", "CSV sink",
                 evalgraph::node_type<CsvSink>({EG_KIND_SINK, "sink.csv",
                                                "Writes every finished record as a CSV row, node outputs flattened into "
                                                "node.field columns",
                                                kParams.schema(), {}, {}, {}, 0u}))
