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

namespace evalgraph::io::detail {

namespace {

using nlohmann::json;

constexpr int kEof = -1;

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
  CsvReader(const std::filesystem::path &file, const json &opts, bool tsv) : src_(file) {
    for (const auto &[key, value] : opts.items()) {
      if (key != "separator" && key != "quote" && key != "json_columns")
        throw DataError(file, 0, "unknown CSV option '" + key + "'", "known options: separator, quote, json_columns");
    }
    int sep = char_option(file, opts, "separator", tsv ? '\t' : ',', true, false);
    int quote = char_option(file, opts, "quote", '"', false, true);
    quoting_ = quote != -2;
    quote_ = quoting_ ? static_cast<char>(quote) : '\0';

    src_.refill();
    if (src_.end - src_.pos >= 3 && std::memcmp(src_.data() + src_.pos, "\xEF\xBB\xBF", 3) == 0) src_.pos += 3;
    sep_ = sep == -1 ? sniff() : static_cast<char>(sep);
    if (quoting_ && quote_ == sep_)
      throw DataError(file, 0, "the quote and the separator are both " + char_name(sep_),
                      "set different characters for separator and quote");
    if (sep_ == '\n' || sep_ == '\r' || (quoting_ && (quote_ == '\n' || quote_ == '\r')))
      throw DataError(file, 0, "a line break cannot be the separator or the quote", "pick another character");

    bool have_header = false;
    while ((have_header = read_row()) && nfields_ == 1 && fields_[0].empty() && !last_quoted_) {
    }  // skip empty lines before the header
    if (!have_header)
      throw DataError(file, 1, "the file has no header line",
                      "a CSV dataset needs a header line that names its columns");
    header_line_ = row_line_;
    columns_.assign(fields_.begin(), fields_.begin() + static_cast<std::ptrdiff_t>(nfields_));
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
    do {
      if (!read_row()) return false;
    } while (nfields_ == 1 && fields_[0].empty() && !last_quoted_);  // empty line
    line_ = row_line_;
    if (nfields_ != columns_.size())
      throw DataError(src_.path(), line_,
                      "the row has " + std::to_string(nfields_) + " field" + (nfields_ == 1 ? "" : "s") +
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
    return true;
  }

  const std::vector<std::string> &columns() const override { return columns_; }
  std::size_t line() const override { return line_; }

 private:
  void set_value(json &value, std::size_t col) {
    std::string &text = fields_[col];
    if (is_json_[col]) {
      if (text.empty()) {
        value = nullptr;
        return;
      }
      try {
        value = json::parse(text);
      } catch (const json::parse_error &) {
        throw DataError(src_.path(), line_,
                        "column '" + columns_[col] + "' is listed in json_columns but its text is not valid JSON",
                        "fix the cell or remove the column from json_columns");
      }
      return;
    }
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

  std::string &field_slot(std::size_t i) {
    if (i == fields_.size()) fields_.emplace_back();
    return fields_[i];
  }

  // Reads one row into fields_[0..nfields_). False at the end of the data.
  bool read_row() {
    if (peek() == kEof) return false;
    row_line_ = lineno_;
    nfields_ = 0;
    for (;;) {
      std::string &f = field_slot(nfields_++);
      f.clear();
      last_quoted_ = false;
      int c = peek();
      if (quoting_ && c == static_cast<unsigned char>(quote_)) {
        last_quoted_ = true;
        read_quoted(f);
      } else {
        read_unquoted(f);
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

  void read_unquoted(std::string &f) {
    const char sep = sep_;
    for (;;) {
      if (src_.pos == src_.end && !src_.refill()) return;
      const char *b = src_.data() + src_.pos;
      const char *e = src_.data() + src_.end;
      const char *p = b;
      while (p != e && *p != sep && *p != '\n' && *p != '\r') ++p;
      f.append(b, p);
      src_.pos += static_cast<std::size_t>(p - b);
      if (p != e) return;
    }
  }

  void read_quoted(std::string &f) {
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
      f.append(b, stop);
      src_.pos += static_cast<std::size_t>(stop - b);
      if (q == nullptr) continue;
      ++src_.pos;  // the quote
      int c = peek();
      if (c == static_cast<unsigned char>(quote_)) {  // doubled quote = one literal quote
        f.push_back(quote_);
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
  std::size_t nfields_ = 0;
  bool last_quoted_ = false;
  std::size_t lineno_ = 1;    // line of the next unread byte
  std::size_t row_line_ = 0;  // line where the row read last started
  std::size_t header_line_ = 1;
  std::size_t line_ = 0;
};

}  // namespace

std::unique_ptr<RecordReader> open_csv(const std::filesystem::path &file, const nlohmann::json &options, bool tsv) {
  return std::make_unique<CsvReader>(file, options, tsv);
}

}  // namespace evalgraph::io::detail
