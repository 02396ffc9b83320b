// JSON Lines reader: one JSON object per line (LF or CRLF), blank lines skipped, a UTF-8 BOM skipped.
//
// Every line is checked by the engine's own scanner (util/raw_json.h), which does not recurse and words every
// refusal itself: nlohmann only ever parses a line that has passed it (next()), so no library message and no
// document-driven recursion reaches the user. A line over limits.record_bytes is passed over without being held
// in memory.
#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "io/byte_source.h"
#include "io/readers.h"
#include "io/record_check.h"
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
  if (n <= kMax) return rawjson::printable(std::string_view(b, n));
  std::size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(b[cut]) & 0xC0) == 0x80) --cut;
  return rawjson::printable(std::string_view(b, cut)) + "…";
}

const char *kind_of(std::string_view line) {
  std::size_t i = line.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos) return "nothing";
  switch (line[i]) {
    case '[': return "an array";
    case '"': return "a string";
    case 't':
    case 'f': return "a boolean";
    case 'n': return "null";
    default: return "a number";
  }
}

class JsonlReader final : public RecordReader {
 public:
  JsonlReader(const std::filesystem::path &file, const json &opts, const RecordLimits &limits) : src_(file) {
    limits_ = limits;
    if (!opts.empty())
      throw DataError(file, 0, "unknown JSONL option '" + opts.begin().key() + "'",
                      "JSON Lines datasets take no options");
    src_.refill();
    refuse_utf16(src_);
    if (src_.end - src_.pos >= 3 && std::memcmp(src_.data() + src_.pos, "\xEF\xBB\xBF", 3) == 0) src_.pos += 3;
  }

  bool next(json &record) override {
    thread_local std::string text;
    thread_local std::vector<rawjson::Member> members;
    if (!next_text(text, &members)) return false;
    if (!problem_.empty()) throw DataError(src_.path(), line_, last_.problem, last_.hint, last_.column);
    record = json::parse(text);  // checked: valid, nested at most limits.nesting_depth (<= 512), numbers in range
    return true;
  }

  // The line itself, checked; a record over a limit with those values replaced (record_problem() says why).
  bool next_text(std::string &text, std::vector<rawjson::Member> *members) override {
    const char *b = nullptr;
    const char *e = nullptr;
    std::size_t length = 0;
    problem_.clear();
    const LineRead got = next_record_line(b, e, length);
    if (got == LineRead::none) return false;
    ++records_;
    if (got == LineRead::too_long) {
      text = "{}";
      if (members != nullptr) members->clear();
      last_ = RecordFault{0, record_too_long(length, limits_.record_bytes) + "; it was not read", record_too_long_hint()};
      problem_ = DataError::format(src_.path(), line_, 0, last_.problem, last_.hint);
      return true;
    }
    thread_local std::vector<rawjson::Member> local;
    std::vector<rawjson::Member> &m = members != nullptr ? *members : local;
    std::string_view line(b, static_cast<std::size_t>(e - b));
    thread_local rawjson::CheckResult res;
    rawjson::check(line, check_options(limits_), res, &m);
    if (res.error.fault != rawjson::Fault::none) {
      const std::size_t col = rawjson::column_of(line, res.error.offset);
      std::string at = rawjson::excerpt(line, res.error.offset);
      throw DataError(src_.path(), line_,
                      "invalid JSON: " + res.error.what + (at.empty() ? "" : ", at: " + at) + " (the line starts: " +
                          snippet(b, e) + ")",
                      hint(b, e, syntax_hint(res.error.fault, "write one complete JSON object per line")), col);
    }
    if (!res.object)
      throw DataError(src_.path(), line_, std::string("expected a JSON object, got ") + kind_of(line) + ": " + snippet(b, e),
                      hint(b, e, "each line must be one JSON object such as {\"question\": \"...\"}"));
    std::vector<RecordFault> faults;
    collect_faults(line, res, m, limits_, faults);
    if (!have_columns_ && faults.empty()) {  // the first (sound) record's keys, in file order
      have_columns_ = true;
      std::unordered_set<std::string_view> seen;
      for (const auto &mem : m)
        if (seen.insert(mem.key).second) columns_.push_back(mem.key);
    }
    if (!faults.empty()) {
      last_ = faults.front();
      problem_ = DataError::format(src_.path(), line_, last_.column, last_.problem + more(faults.size()), last_.hint);
      reduce(line, m, res, limits_, text);
      if (members != nullptr) rawjson::object_members(text, *members);
      return true;
    }
    if (std::memchr(line.data(), '\r', line.size()) != nullptr) {
      // A CR between tokens (never inside a string: it would be a raw control character) would end the line
      // for some readers of our output: dropped, which leaves the same JSON.
      text.clear();
      for (char c : line)
        if (c != '\r') text.push_back(c);
      if (members != nullptr) rawjson::object_members(text, *members);
      return true;
    }
    text.assign(line);
    return true;
  }

  bool skip() override {
    if (!have_columns_) return RecordReader::skip();  // the first record sets the columns
    const char *b = nullptr;
    const char *e = nullptr;
    std::size_t length = 0;
    problem_.clear();
    if (next_record_line(b, e, length) == LineRead::none) return false;
    ++records_;
    return true;
  }

  const std::vector<std::string> &columns() const override { return columns_; }
  std::size_t line() const override { return line_; }

 private:
  enum class LineRead { none, ok, too_long };

  // The next non-blank line [b, e), without its line end; none at the end of the file. A line longer than
  // limits.record_bytes is too_long: it is read past without being kept, and `length` is its size.
  LineRead next_record_line(const char *&b, const char *&e, std::size_t &length) {
    for (;;) {
      LineRead r = next_line(b, e, length);
      if (r == LineRead::none) return r;
      line_ = lineno_ - 1;
      if (r == LineRead::too_long) return r;
      if (e != b && e[-1] == '\r') --e;
      if (is_blank(b, e)) continue;
      if (static_cast<std::size_t>(e - b) > limits_.record_bytes) {
        length = static_cast<std::size_t>(e - b);
        return LineRead::too_long;
      }
      return LineRead::ok;
    }
  }

  std::string hint(const char *b, const char *e, const std::string &dflt) const {
    while (b != e && (*b == ' ' || *b == '\t')) ++b;
    if (records_ <= 1 && b != e && *b == '[')
      return "this looks like one JSON array, not JSON Lines; convert it to one object per line, e.g. "
             "jq -c '.[]' data.json > data.jsonl";
    return dflt;
  }

  // The next line [b, e) without its '\n'; none at the end of the file. A line that grows beyond
  // limits.record_bytes (+1 for a CR) is read to its end in chunks that are dropped: too_long, `length` bytes.
  LineRead next_line(const char *&b, const char *&e, std::size_t &length) {
    const std::size_t cap = limits_.record_bytes + 1;
    std::size_t scanned = src_.pos;
    for (;;) {
      char *base = src_.data();
      auto *nl = static_cast<char *>(std::memchr(base + scanned, '\n', src_.end - scanned));
      if (nl != nullptr) {
        b = base + src_.pos;
        e = nl;
        src_.pos = static_cast<std::size_t>(nl - base) + 1;
        ++lineno_;
        return LineRead::ok;
      }
      if (src_.end - src_.pos > cap) {
        // A NUL byte is never JSON text: hand the held part over as the line, so that the checker refuses the
        // data set at its line and column, instead of reading past a "line" that may never end (/dev/zero).
        if (std::memchr(base + src_.pos, '\0', cap) != nullptr) {
          b = base + src_.pos;
          e = b + limits_.record_bytes;
          src_.pos += limits_.record_bytes;
          ++lineno_;
          return LineRead::ok;
        }
        return drop_rest_of_line(length);
      }
      std::size_t offset = src_.end - src_.pos;  // bytes of this line already scanned
      if (!src_.refill()) {
        if (src_.pos == src_.end) return LineRead::none;
        b = src_.data() + src_.pos;  // last line without a final '\n'
        e = src_.data() + src_.end;
        src_.pos = src_.end;
        ++lineno_;
        return LineRead::ok;
      }
      scanned = src_.pos + offset;
    }
  }

  LineRead drop_rest_of_line(std::size_t &length) {
    length = src_.end - src_.pos;
    src_.pos = src_.end;
    for (;;) {
      runs_on(length);
      if (!src_.refill()) break;  // the file ends inside the line
      const char *base = src_.data();
      const auto *nl = static_cast<const char *>(std::memchr(base + src_.pos, '\n', src_.end - src_.pos));
      if (nl != nullptr) {
        length += static_cast<std::size_t>(nl - (base + src_.pos));
        src_.pos = static_cast<std::size_t>(nl - base) + 1;
        break;
      }
      length += src_.end - src_.pos;
      src_.pos = src_.end;
    }
    runs_on(length);
    ++lineno_;
    return LineRead::too_long;
  }

  // A line past limits.skip_bytes() is no record (a device such as /dev/zero, a binary file): refuse the data set.
  void runs_on(std::size_t length) const {
    if (length <= limits_.skip_bytes()) return;
    throw DataError(src_.path(), lineno_,
                    "line " + std::to_string(lineno_) + " runs on for more than " + std::to_string(limits_.skip_bytes() >> 10) +
                        " KB without a line break (64 x limits.record_bytes): this is not a JSON Lines file",
                    "give a file with one JSON object per line (a device such as /dev/zero, or a binary file, is not one)");
  }

  ByteSource src_;
  std::vector<std::string> columns_;
  bool have_columns_ = false;
  std::size_t records_ = 0;
  std::size_t lineno_ = 1;  // line of the next unread byte
  std::size_t line_ = 0;
  RecordFault last_;
};

}  // namespace

std::unique_ptr<RecordReader> open_jsonl(const std::filesystem::path &file, const nlohmann::json &options,
                                         const RecordLimits &limits) {
  return std::make_unique<JsonlReader>(file, options, limits);
}

}  // namespace evalgraph::io::detail
