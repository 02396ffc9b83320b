#include "table.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "evalgraph/csv.hpp"
#include "evalgraph/plugin.hpp"

namespace csv_sink {

namespace {
constexpr std::size_t kBufferSize = std::size_t{1} << 20;

// Body file row: [uint32 number of fields][uint64 byte length][bytes of the fields, separated, no line end].
struct RowHead {
  std::uint32_t fields;
  std::uint64_t bytes;
};
}  // namespace

TableWriter::TableWriter(const std::filesystem::path &file, const TableOptions &options)
    : sep_(options.separator), bom_(options.bom), fixed_columns_(options.columns.has_value()) {
  if (options.columns) {
    if (options.columns->empty()) throw std::invalid_argument("parameter columns must be a non-empty list of names");
    for (const auto &name : *options.columns) {
      if (!index_.emplace(name, columns_.size()).second)
        throw std::invalid_argument("parameter columns names '" + name + "' twice");
      columns_.push_back(name);
    }
  }
  body_path_ = evalgraph::partial_path(file);
  body_path_ += ".body";
  out_.open_partial(file, kBufferSize);
  if (fixed_columns_) {
    write_header();
  } else {
    body_.open(body_path_, "w+b", kBufferSize);
  }
}

void TableWriter::add(std::string_view record) {
  if (finished_) throw std::runtime_error("process() after finish()");
  nlohmann::ordered_json parsed;
  try {
    parsed = nlohmann::ordered_json::parse(record.begin(), record.end());
  } catch (const nlohmann::json::parse_error &e) {
    throw evalgraph::InputError(std::string("the record is not valid JSON: ") + e.what());
  }
  evalgraph::csv::flatten(parsed, pairs_);
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

void TableWriter::finish() {
  if (finished_) throw std::runtime_error("finish() called twice");
  finished_ = true;
  if (!fixed_columns_) {
    write_header();
    copy_body();
  }
  out_.publish(true, "sink.csv");
  if (!fixed_columns_) std::filesystem::remove(body_path_);
}

void TableWriter::write_header() {
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
void TableWriter::copy_body() {
  std::FILE *in = body_.get();
  if (std::fflush(in) != 0 || std::fseek(in, 0, SEEK_SET) != 0)
    throw std::runtime_error("cannot read back " + body_path_.string() + ": " + std::strerror(errno));
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

}  // namespace csv_sink
