// CSV/TSV reader (RFC 4180): quoted fields with separators, doubled quotes and line breaks; LF, CRLF or CR line
// ends; a UTF-8 BOM; empty lines skipped. Reads the file in 1 MiB chunks and scans unquoted text in spans.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "io/byte_source.h"
#include "io/readers.h"
#include "io/record_check.h"

namespace evalgraph::io::detail {

namespace {

using nlohmann::json;

constexpr int kEof = -1;

std::string hex_byte(char c) {
  static const char kHex[] = "0123456789ABCDEF";
  auto u = static_cast<unsigned char>(c);
  return std::string{kHex[u >> 4], kHex[u & 0xF]};
}

std::string char_name(char c) {
  switch (c) {
    case '\t': return "tab";
    case ',': return "','";
    case ';': return "';'";
    case '|': return "'|'";
    default: return std::string("'") + c + "'";
  }
}

// Reads one option that must be a single character.
// Returns -1 for "auto" (when allowed), -2 for "" (when allowed).
int char_option(const std::filesystem::path &file, const json &opts, const char *name, int dflt, bool allow_auto,
                bool allow_empty) {
  auto it = opts.find(name);
  if (it == opts.end() || it->is_null()) return dflt;
  std::string hint = std::string("write ") + name + " as one character" + (allow_auto ? ", \"tab\" or \"auto\"" : "") +
                     (allow_empty ? " (\"\" turns quoting off)" : "");
  if (!it->is_string()) throw DataError(file, 0, std::string("option ") + name + " must be a string", hint);
  const std::string &s = it->get_ref<const std::string &>();
  if (s == "auto" && allow_auto) return -1;
  if (s == "tab" || s == "\\t") return '\t';
  if (s.empty() && allow_empty) return -2;
  if (s.size() != 1)
    throw DataError(file, 0, std::string("option ") + name + " '" + s + "' is not one character", hint);
  return static_cast<unsigned char>(s[0]);
}

class CsvReader final : public RecordReader {
 public:
  CsvReader(const std::filesystem::path &file, const json &opts, bool tsv, const RecordLimits &limits) : src_(file) {
    limits_ = limits;
    for (const auto &[key, value] : opts.items()) {
      if (key != "separator" && key != "quote" && key != "json_columns")
        throw DataError(file, 0, "unknown CSV option '" + key + "'", "known options: separator, quote, json_columns");
    }
    int sep = char_option(file, opts, "separator", tsv ? '\t' : ',', true, false);
    int quote = char_option(file, opts, "quote", '"', false, true);
    quoting_ = quote != -2;
    quote_ = quoting_ ? static_cast<char>(quote) : '\0';

    src_.refill();
    refuse_utf16(src_);
    if (src_.end - src_.pos >= 3 && std::memcmp(src_.data() + src_.pos, "\xEF\xBB\xBF", 3) == 0) src_.pos += 3;
    sep_ = sep == -1 ? sniff() : static_cast<char>(sep);
    if (quoting_ && quote_ == sep_)
      throw DataError(file, 0, "the quote and the separator are both " + char_name(sep_),
                      "set different characters for separator and quote");
    if (sep_ == '\n' || sep_ == '\r' || (quoting_ && (quote_ == '\n' || quote_ == '\r')))
      throw DataError(file, 0, "a line break cannot be the separator or the quote", "pick another character");

    bool have_header = false;
    while ((have_header = read_row()) && nfields_total_ == 1 && fields_[0].empty() && !last_quoted_) {
    }  // skip empty lines before the header
    if (!have_header)
      throw DataError(file, 1, "the file has no header line",
                      "a CSV dataset needs a header line that names its columns");
    header_line_ = row_line_;
    for (std::size_t i = 0; i < nfields_ && !row_capped_; ++i) row_capped_ = field_len_[i] != fields_[i].size();
    if (row_capped_)
      throw DataError(file, header_line_,
                      "the header line is " + thousands(row_bytes_) + " bytes with " + thousands(nfields_total_) +
                          " columns, over the limits for one record (limits.field_bytes = " + thousands(limits_.field_bytes) +
                          ", limits.record_bytes = " + thousands(limits_.record_bytes) + ", at most " +
                          thousands(kMaxColumns) + " columns)",
                      "check the separator and the quoting of the header line");
    columns_.assign(fields_.begin(), fields_.begin() + static_cast<std::ptrdiff_t>(nfields_));
    for (const auto &c : columns_)
      if (std::size_t bad = rawjson::invalid_utf8(c); bad != std::string_view::npos)
        throw DataError(file, header_line_,
                        "the header holds bytes that are not UTF-8 (byte 0x" + hex_byte(c[bad]) + " in column name '" +
                            rawjson::excerpt(c, 0) + "')",
                        "save the file as UTF-8 (Excel: \"CSV UTF-8\"), or convert it, e.g. iconv -f WINDOWS-1252 -t "
                        "UTF-8 in.csv > out.csv");
    std::unordered_set<std::string_view> seen;
    for (const auto &c : columns_) {
      if (!seen.insert(c).second)
        throw DataError(file, header_line_, "the header names column '" + c + "' twice",
                        "give every column a distinct name");
    }
    // Columns in the order nlohmann's object (a sorted map) keeps them, to build records with hints.
    sorted_.resize(columns_.size());
    std::iota(sorted_.begin(), sorted_.end(), std::size_t{0});
    std::sort(sorted_.begin(), sorted_.end(), [&](std::size_t a, std::size_t b) { return columns_[a] < columns_[b]; });

    is_json_.assign(columns_.size(), false);
    if (auto it = opts.find("json_columns"); it != opts.end() && !it->is_null()) {
      if (!it->is_array())
        throw DataError(file, 0, "option json_columns must be a list of column names", "write json_columns: [a, b]");
      for (const auto &name : *it) {
        auto pos = name.is_string() ? std::find(columns_.begin(), columns_.end(), name.get<std::string>())
                                    : columns_.end();
        if (pos == columns_.end())
          throw DataError(file, header_line_, "json_columns names " + name.dump() + ", which the header does not have",
                          "use one of the header's column names");
        is_json_[static_cast<std::size_t>(pos - columns_.begin())] = true;
      }
    }
  }

  bool next(json &record) override {
    if (!read_record(record)) return false;
    if (!problem_.empty()) throw DataError(src_.path(), line_, last_.problem, last_.hint, last_.column);
    return true;
  }

  bool next_text(std::string &text, std::vector<rawjson::Member> *members) override {
    thread_local json record;
    if (!read_record(record)) return false;
    serialise_record(record, columns_, text, members);
    return true;
  }

  const std::vector<std::string> &columns() const override { return columns_; }
  std::size_t line() const override { return line_; }

 private:
  static constexpr std::size_t kMaxColumns = 100000;

  // The next record; a record over a limit comes with problem_ set and those cells null.
  bool read_record(json &record) {
    problem_.clear();
    faults_.clear();
    do {
      if (!read_row()) return false;
    } while (nfields_total_ == 1 && fields_[0].empty() && !last_quoted_);  // empty line
    line_ = row_line_;
    if (nfields_total_ != columns_.size())
      throw DataError(src_.path(), line_,
                      "the row has " + std::to_string(nfields_total_) + " field" + (nfields_total_ == 1 ? "" : "s") +
                          " but the header has " + std::to_string(columns_.size()) + " column" +
                          (columns_.size() == 1 ? "" : "s"),
                      "quote fields that contain the separator (" + char_name(sep_) +
                          ") and check for a missing or extra separator on that line");
    const std::size_t n = columns_.size();
    // Fast path: the caller passed back the previous record untouched — reuse its nodes and strings.
    if (record.is_object() && record.size() == n) {
      auto &obj = record.get_ref<json::object_t &>();
      std::size_t k = 0;
      for (auto it = obj.begin(); it != obj.end(); ++it, ++k) {
        if (it->first != columns_[sorted_[k]]) break;
      }
      if (k == n) {
        k = 0;
        for (auto it = obj.begin(); it != obj.end(); ++it, ++k) set_value(it->second, sorted_[k]);
        finish_record();
        return true;
      }
    }
    json fresh(json::value_t::object);
    auto &obj = fresh.get_ref<json::object_t &>();
    for (std::size_t k = 0; k < n; ++k) {
      auto it = obj.emplace_hint(obj.end(), columns_[sorted_[k]], json());
      set_value(it->second, sorted_[k]);
    }
    record = std::move(fresh);
    finish_record();
    return true;
  }

  // Words the record's faults (set_value collected them) as its problem.
  void finish_record() {
    if (row_capped_) {
      faults_.insert(faults_.begin(), RecordFault{0, record_too_long(row_bytes_, limits_.record_bytes), record_too_long_hint()});
    }
    if (faults_.empty()) return;
    last_ = faults_.front();
    problem_ = DataError::format(src_.path(), line_, 0, last_.problem + more(faults_.size()), last_.hint);
  }

  void set_value(json &value, std::size_t col) {
    std::string &text = fields_[col];
    if (field_len_[col] > limits_.field_bytes || (row_capped_ && field_len_[col] != text.size())) {
      if (field_len_[col] > limits_.field_bytes)
        faults_.push_back(RecordFault{0, field_too_long(columns_[col], field_len_[col], limits_.field_bytes),
                                      field_too_long_hint()});
      value = nullptr;
      return;
    }
    if (is_json_[col]) {
      if (text.empty()) {
        value = nullptr;
        return;
      }
      RecordFault fault;
      bool over = false;
      if (!check_cell(text, "column '" + columns_[col] + "'", limits_, fault, over))
        throw DataError(src_.path(), line_, fault.problem, fault.hint);
      if (over) {
        faults_.push_back(std::move(fault));
        value = nullptr;
        return;
      }
      value = json::parse(text);  // checked: valid, within the nesting limit, numbers in range, keys unique
      return;
    }
    if (std::size_t bad = rawjson::invalid_utf8(text); bad != std::string_view::npos)
      throw DataError(src_.path(), line_,
                      "column '" + columns_[col] + "' holds bytes that are not UTF-8 (byte 0x" + hex_byte(text[bad]) +
                          " at character " + std::to_string(rawjson::column_of(text, bad)) + " of the cell)",
                      "save the file as UTF-8 (Excel: \"CSV UTF-8\"), or convert it, e.g. iconv -f WINDOWS-1252 -t "
                      "UTF-8 in.csv > out.csv");
    if (value.is_string()) {
      std::swap(value.get_ref<std::string &>(), text);  // both sides keep their capacity
    } else {
      value = std::move(text);
      text = std::string();
    }
  }

  int peek() {
    if (src_.pos == src_.end && !src_.refill()) return kEof;
    return static_cast<unsigned char>(src_.data()[src_.pos]);
  }

  // Picks the separator that occurs most often (outside quotes) on the header line: , ; tab |.
  char sniff() {
    const char candidates[] = {',', ';', '\t', '|'};
    std::size_t counts[4] = {0, 0, 0, 0};
    bool in_quotes = false;
    for (std::size_t i = src_.pos; i < src_.end; ++i) {
      char c = src_.data()[i];
      if (quoting_ && c == quote_) {
        in_quotes = !in_quotes;
      } else if (!in_quotes) {
        if (c == '\n' || c == '\r') break;
        for (int k = 0; k < 4; ++k) counts[k] += (c == candidates[k]);
      }
    }
    int best = 0;
    for (int k = 1; k < 4; ++k)
      if (counts[k] > counts[best]) best = k;
    return candidates[best];
  }

  // The slot for field i; past the header's width (+1, to tell a row with too many fields) one scratch slot
  // takes every further field, so a row of a million separators costs no million strings.
  std::string &field_slot(std::size_t i) {
    const std::size_t width = columns_.empty() ? kMaxColumns : columns_.size() + 1;
    if (i >= width) i = width;
    while (fields_.size() <= i) fields_.emplace_back();
    if (field_len_.size() < fields_.size()) field_len_.resize(fields_.size());
    if (i >= nfields_) nfields_ = i + 1;
    return fields_[i];
  }

  // Bytes a field may still keep: none beyond limits.field_bytes (+1, to know it is over) or beyond the row's
  // limits.record_bytes. What is not kept is only counted (field_len_, row_bytes_).
  std::size_t room(const std::string &f) const {
    const std::size_t field_room = limits_.field_bytes + 1 > f.size() ? limits_.field_bytes + 1 - f.size() : 0;
    const std::size_t row_room = limits_.record_bytes > row_kept_ ? limits_.record_bytes - row_kept_ : 0;
    return std::min(field_room, row_room);
  }
  void keep(std::string &f, std::size_t i, const char *b, const char *e) {
    const auto n = static_cast<std::size_t>(e - b);
    const std::size_t k = std::min(n, room(f));
    f.append(b, k);
    row_kept_ += k;
    field_len_[i] += n;
    row_bytes_ += n;
    if (row_bytes_ > limits_.record_bytes) row_capped_ = true;
    if (row_bytes_ > limits_.skip_bytes())
      throw DataError(src_.path(), row_line_,
                      "the row that starts on line " + std::to_string(row_line_) + " runs on for more than " +
                          std::to_string(limits_.skip_bytes() >> 10) + " KB (64 x limits.record_bytes): this is not a "
                          "CSV file",
                      "check the quoting (an unclosed quote runs to the end of the file) or give a CSV file (a device "
                      "such as /dev/zero, or a binary file, is not one)");
  }

  // Reads one row into fields_[0..nfields_). False at the end of the data.
  bool read_row() {
    if (peek() == kEof) return false;
    row_line_ = lineno_;
    nfields_ = 0;
    nfields_total_ = 0;
    row_kept_ = row_bytes_ = 0;
    row_capped_ = false;
    for (;;) {
      const std::size_t i = std::min(nfields_total_, columns_.empty() ? kMaxColumns : columns_.size() + 1);
      std::string &f = field_slot(i);
      ++nfields_total_;
      if (nfields_total_ > kMaxColumns) row_capped_ = true;
      f.clear();
      field_len_[i] = 0;
      last_quoted_ = false;
      int c = peek();
      if (quoting_ && c == static_cast<unsigned char>(quote_)) {
        last_quoted_ = true;
        read_quoted(f, i);
      } else {
        read_unquoted(f, i);
      }
      c = peek();
      if (c == kEof) return true;
      ++src_.pos;
      if (c == static_cast<unsigned char>(sep_)) continue;
      ++lineno_;
      if (c == '\r' && peek() == '\n') ++src_.pos;
      return true;
    }
  }

  void read_unquoted(std::string &f, std::size_t i) {
    const char sep = sep_;
    for (;;) {
      if (src_.pos == src_.end && !src_.refill()) return;
      const char *b = src_.data() + src_.pos;
      const char *e = src_.data() + src_.end;
      const char *p = b;
      while (p != e && *p != sep && *p != '\n' && *p != '\r') ++p;
      keep(f, i, b, p);
      src_.pos += static_cast<std::size_t>(p - b);
      if (p != e) return;
    }
  }

  void read_quoted(std::string &f, std::size_t i) {
    const std::size_t start_line = lineno_;
    ++src_.pos;  // opening quote
    for (;;) {
      if (src_.pos == src_.end && !src_.refill())
        throw DataError(src_.path(), start_line, "a quoted field that starts on this line is never closed",
                        "add the closing " + char_name(quote_) + " and write quotes inside the field doubled (" +
                            std::string(2, quote_) + ")");
      const char *b = src_.data() + src_.pos;
      const char *e = src_.data() + src_.end;
      const char *q = static_cast<const char *>(std::memchr(b, quote_, static_cast<std::size_t>(e - b)));
      const char *stop = q != nullptr ? q : e;
      lineno_ += static_cast<std::size_t>(std::count(b, stop, '\n'));
      keep(f, i, b, stop);
      src_.pos += static_cast<std::size_t>(stop - b);
      if (q == nullptr) continue;
      ++src_.pos;  // the quote
      int c = peek();
      if (c == static_cast<unsigned char>(quote_)) {  // doubled quote = one literal quote
        keep(f, i, &quote_, &quote_ + 1);
        ++src_.pos;
        continue;
      }
      if (c == kEof || c == static_cast<unsigned char>(sep_) || c == '\n' || c == '\r') return;
      throw DataError(src_.path(), lineno_,
                      "unexpected text after the closing quote of a field (" + std::string(1, static_cast<char>(c)) +
                          ")",
                      "a field must end right after its closing quote; write quotes inside a quoted field doubled (" +
                          std::string(2, quote_) + ")");
    }
  }

  ByteSource src_;
  char sep_ = ',';
  char quote_ = '"';
  bool quoting_ = true;
  std::vector<std::string> columns_;
  std::vector<std::size_t> sorted_;
  std::vector<bool> is_json_;
  std::vector<std::string> fields_;
  std::vector<std::size_t> field_len_;  // each field's true length (fields_ keeps at most the limit)
  std::size_t nfields_ = 0;             // slots in use
  std::size_t nfields_total_ = 0;       // fields the row has
  std::size_t row_kept_ = 0, row_bytes_ = 0;
  bool row_capped_ = false;  // the row is over limits.record_bytes (or kMaxColumns fields)
  std::vector<RecordFault> faults_;
  RecordFault last_;
  bool last_quoted_ = false;
  std::size_t lineno_ = 1;    // line of the next unread byte
  std::size_t row_line_ = 0;  // line where the row read last started
  std::size_t header_line_ = 1;
  std::size_t line_ = 0;
};

}  // namespace

std::unique_ptr<RecordReader> open_csv(const std::filesystem::path &file, const nlohmann::json &options, bool tsv,
                                       const RecordLimits &limits) {
  return std::make_unique<CsvReader>(file, options, tsv, limits);
}

}  // namespace evalgraph::io::detail
