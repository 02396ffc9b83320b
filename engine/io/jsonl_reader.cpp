// JSON Lines reader: one JSON object per line (LF or CRLF), blank lines skipped, a UTF-8 BOM skipped.
#include <cstring>
#include <string_view>

#include "io/byte_source.h"
#include "io/readers.h"
#include "util/raw_json.h"

namespace evalgraph::io::detail {

namespace {

using nlohmann::json;

bool is_blank(const char *b, const char *e) {
  for (; b != e; ++b)
    if (*b != ' ' && *b != '\t' && *b != '\r' && *b != '\f' && *b != '\v') return false;
  return true;
}

// The start of a line for an error message: at most ~60 bytes, cut at a UTF-8 character boundary.
std::string snippet(const char *b, const char *e) {
  while (b != e && (*b == ' ' || *b == '\t')) ++b;
  std::size_t n = static_cast<std::size_t>(e - b);
  constexpr std::size_t kMax = 60;
  if (n <= kMax) return std::string(b, n);
  std::size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(b[cut]) & 0xC0) == 0x80) --cut;
  return std::string(b, cut) + "…";
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1, " prefix.
std::string parse_reason(const json::parse_error &e) {
  std::string_view w = e.what();
  auto at = w.find("column ");
  std::string_view r = at == std::string_view::npos ? w : w.substr(at);
  if (r.size() > 160) return std::string(r.substr(0, 160)) + "…";
  return std::string(r);
}

class JsonlReader final : public RecordReader {
 public:
  JsonlReader(const std::filesystem::path &file, const json &opts) : src_(file) {
    if (!opts.empty())
      throw DataError(file, 0, "unknown JSONL option '" + opts.begin().key() + "'",
                      "JSON Lines datasets take no options");
    src_.refill();
    if (src_.end - src_.pos >= 3 && std::memcmp(src_.data() + src_.pos, "\xEF\xBB\xBF", 3) == 0) src_.pos += 3;
  }

  bool next(json &record) override {
    const char *b = nullptr;
    const char *e = nullptr;
    if (!next_record_line(b, e)) return false;
    parse_checked(b, e, record);
    return true;
  }

  // The line itself when the fast checker accepts it as an object; otherwise the full parser decides (and
  // words the error), so both paths accept and refuse the same lines.
  bool next_text(std::string &text, std::vector<rawjson::Member> *members) override {
    const char *b = nullptr;
    const char *e = nullptr;
    if (!next_record_line(b, e)) return false;
    std::string_view line(b, static_cast<std::size_t>(e - b));
    std::size_t lead = line.find_first_not_of(" \t");
    // (a CR inside the line, whitespace between tokens, would end the line for some readers of our output)
    const bool fast = lead != std::string_view::npos && line[lead] == '{' &&
                      std::memchr(line.data(), '\r', line.size()) == nullptr &&
                      (members != nullptr ? rawjson::object_members(line, *members) : rawjson::valid(line));
    if (!fast || !have_columns_) {  // the first record also sets the columns
      json record;
      parse_checked(b, e, record);
      if (!fast) {  // re-serialised: a CR between tokens, or nesting beyond the checker's limit
        text = record.dump(-1, ' ', false, json::error_handler_t::replace);
        if (members != nullptr) rawjson::object_members(text, *members);
        return true;
      }
    } else {
      ++records_;
    }
    text.assign(line);
    return true;
  }

  bool skip() override {
    if (!have_columns_) return RecordReader::skip();  // the first record sets the columns
    const char *b = nullptr;
    const char *e = nullptr;
    return next_record_line(b, e);
  }

  const std::vector<std::string> &columns() const override { return columns_; }
  std::size_t line() const override { return line_; }

 private:
  // The next non-blank line [b, e), without its line end; false at the end of the file.
  bool next_record_line(const char *&b, const char *&e) {
    for (;;) {
      if (!next_line(b, e)) return false;
      if (e != b && e[-1] == '\r') --e;
      if (is_blank(b, e)) continue;
      line_ = lineno_ - 1;
      return true;
    }
  }

  void parse_checked(const char *b, const char *e, json &record) {
    try {
      record = json::parse(b, e);
    } catch (const json::parse_error &err) {
      throw DataError(src_.path(), line_, "invalid JSON (" + parse_reason(err) + ") in: " + snippet(b, e),
                      hint(b, e, "write one complete JSON object per line"));
    }
    if (!record.is_object())
      throw DataError(src_.path(), line_,
                      std::string("expected a JSON object, got ") + record.type_name() + ": " + snippet(b, e),
                      hint(b, e, "each line must be one JSON object such as {\"question\": \"...\"}"));
    if (!have_columns_) {
      have_columns_ = true;
      // The first record's keys in file order (nlohmann's json sorts them; ordered_json keeps them).
      // (kept in a named variable: items() of a temporary would dangle in the range-for)
      const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(b, e);
      for (const auto &[key, value] : ordered.items()) columns_.push_back(key);
    }
    ++records_;
  }

  std::string hint(const char *b, const char *e, const std::string &dflt) const {
    while (b != e && (*b == ' ' || *b == '\t')) ++b;
    if (records_ == 0 && b != e && *b == '[')
      return "this looks like one JSON array, not JSON Lines; convert it to one object per line, e.g. "
             "jq -c '.[]' data.json > data.jsonl";
    return dflt;
  }

  // The next line [b, e) without its '\n'; false at the end of the file.
  bool next_line(const char *&b, const char *&e) {
    std::size_t scanned = src_.pos;
    for (;;) {
      char *base = src_.data();
      auto *nl = static_cast<char *>(std::memchr(base + scanned, '\n', src_.end - scanned));
      if (nl != nullptr) {
        b = base + src_.pos;
        e = nl;
        src_.pos = static_cast<std::size_t>(nl - base) + 1;
        ++lineno_;
        return true;
      }
      std::size_t offset = scanned - src_.pos;  // bytes of this line already scanned
      if (!src_.refill()) {
        if (src_.pos == src_.end) return false;
        b = src_.data() + src_.pos;  // last line without a final '\n'
        e = src_.data() + src_.end;
        src_.pos = src_.end;
        ++lineno_;
        return true;
      }
      scanned = src_.pos + offset;
    }
  }

  ByteSource src_;
  std::vector<std::string> columns_;
  bool have_columns_ = false;
  std::size_t records_ = 0;
  std::size_t lineno_ = 1;  // line of the next unread byte
  std::size_t line_ = 0;
};

}  // namespace

std::unique_ptr<RecordReader> open_jsonl(const std::filesystem::path &file, const nlohmann::json &options) {
  return std::make_unique<JsonlReader>(file, options);
}

}  // namespace evalgraph::io::detail
