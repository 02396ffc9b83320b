#include "util/raw_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_set>

#include "evalgraph/json_scan.hpp"
#include "evalgraph/utf8.hpp"

namespace evalgraph::rawjson {

namespace {

namespace scan = evalgraph::json_scan;

// Where a check keeps its containers' counts and the keys of open objects. One per thread, reused from scan to
// scan (a scan never starts another on the same thread), so checking a record allocates nothing once the vectors
// have grown.
struct Frame {
  std::size_t items = 0;     // array elements or object members so far
  std::size_t key_base = 0;  // this object's first key in Workspace::keys (unique_keys)
  int set = -1;              // index of its key set in Workspace::sets, once it has many keys
};
struct Workspace {
  std::vector<Frame> frames;
  std::vector<std::string_view> keys;
  std::deque<std::string> decoded;  // keys that held escapes, unescaped (stable addresses)
  std::vector<std::unordered_set<std::string_view>> sets;
  std::size_t sets_used = 0;
};
Workspace &workspace() {
  thread_local Workspace ws;
  return ws;
}

constexpr std::size_t kLinearKeys = 32;  // up to this many keys an object's keys are compared one by one
constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();

std::string shown(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7F) return std::string("'") + c + "'";
  static const char kHex[] = "0123456789ABCDEF";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 0xF];
}

std::string unexpected_value(char c) {
  if (c == '}' || c == ']') return "a value is missing before " + shown(c) + " (a comma too many?)";
  if (c == ',') return "a value is missing before ','";
  if (c == '\'') return "strings are written in double quotes, not single quotes";
  if (c == 'N' || c == 'I') return "NaN and Infinity are not JSON; write null (or the value as a string)";
  if (c == 'T' || c == 'F') return "true and false are written in lower case";
  return "expected a value (a string, number, object, array, true, false or null), found " + shown(c);
}

// The words for a problem inside a string or a literal or number (the scanner's Why), "" for the others.
std::string token_problem(scan::Why why, char c, char next) {
  using W = scan::Why;
  switch (why) {
    case W::string_not_closed:
      return "a string is not closed (its closing '\"' is missing)";
    case W::nul_in_string:
      return "a NUL byte inside a string (a file with NUL bytes may be UTF-16: convert it to UTF-8)";
    case W::control_in_string: {
      static const char kHex[] = "0123456789abcdef";
      const auto u = static_cast<unsigned char>(c);
      const std::string esc = std::string("\\u00") + kHex[u >> 4] + kHex[u & 0xF];
      return "a raw control character (U+00" + esc.substr(4) + ") inside a string; write it escaped as " +
             (c == '\n'   ? std::string("\\n")
              : c == '\t' ? std::string("\\t")
                          : esc);
    }
    case W::bad_utf8:
      return "bytes that are not UTF-8 (" + shown(c) + "); save the file as UTF-8, e.g. iconv -f WINDOWS-1252 -t UTF-8";
    case W::unknown_escape:
      return "\\" + std::string(1, next) +
             " is no JSON escape (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; write a backslash as \\\\)";
    case W::short_unicode_escape:
      return "\\u must be followed by four hex digits";
    case W::lone_low_surrogate:
      return "a \\u escape of a low surrogate without its high surrogate";
    case W::lone_high_surrogate:
      return "a \\u escape of a high surrogate without its low surrogate";
    case W::literal_at_end:
      return std::string("the text ends inside the literal ") + (c == 't' ? "true" : c == 'f' ? "false" : "null");
    case W::bad_literal:
      return "invalid literal; JSON has true, false and null (in lower case)";
    case W::leading_zero:
      return "a number must not start with 0 (leading zeros are not JSON)";
    case W::minus_without_digits:
      return "invalid number ('-' must be followed by digits)";
    case W::fraction_without_digits:
      return "invalid number (a '.' must be followed by digits)";
    case W::exponent_without_digits:
      return "invalid number (an exponent needs digits)";
    default:
      return "";
  }
}

// The words for the scanner's problem `e` in `text`.
std::string describe(const scan::Error &e, std::string_view text) {
  using W = scan::Why;
  const char c = e.offset < text.size() ? text[e.offset] : '\0';
  const char next = e.offset + 1 < text.size() ? text[e.offset + 1] : '\0';
  switch (e.why) {
    case W::value_missing:
      return "the text ends where a value should be";
    case W::unexpected_value:
      return unexpected_value(c);
    case W::trailing:
      return "there is more text after the end of the value";
    case W::open_object:
      return "the text ends inside an object (a '}' is missing)";
    case W::open_array:
      return "the text ends inside an array (a ']' is missing)";
    case W::expected_comma_object:
      return "expected ',' or '}' after an object member, found " + shown(c);
    case W::expected_comma_array:
      return "expected ',' or ']' after an array item, found " + shown(c);
    case W::member_missing:
      return "a member is missing before '}' (a comma too many?)";
    case W::expected_key:
      return "expected a key in double quotes, found " + shown(c);
    case W::expected_colon:
      return "expected ':' after the key, found " + shown(c);
    default:
      return token_problem(e.why, c, next);
  }
}

Fault fault_of(scan::Fault f) {
  switch (f) {
    case scan::Fault::end_of_text:
      return Fault::end_of_text;
    case scan::Fault::bad_utf8:
      return Fault::bad_utf8;
    case scan::Fault::control_char:
      return Fault::control_char;
    case scan::Fault::bad_escape:
      return Fault::bad_escape;
    case scan::Fault::trailing:
      return Fault::trailing;
    default:
      return Fault::syntax;
  }
}

// The scanner's handler for valid(), object_members(), array_elements() and check(). Without a CheckResult
// every limit fault stops the scan (the text is refused). With one, limit faults are recorded and the scan goes
// on; the scanner's own (syntax) problem is recorded by finish().
class Checker : public scan::Handler {
 public:
  Checker(std::string_view text, const CheckOptions &opt, CheckResult *res, std::vector<Member> *members,
          std::vector<Span> *elements)
      : text_(text), opt_(opt), res_(res), w_(workspace()), members_(members), elements_(elements) {
    w_.frames.clear();
    w_.keys.clear();
    w_.decoded.clear();
    w_.sets_used = 0;
  }

  bool begin(bool object, std::size_t off, std::size_t depth) {
    if (depth == 0) top_object_ = object;
    if (depth == 1) value_starts(off);
    w_.frames.push_back(Frame{0, w_.keys.size(), -1});
    const auto levels = static_cast<long>(depth) + 1, max = static_cast<long>(opt_.max_depth);
    if (levels == max + 1)
      return limit(Fault::depth, off, "the value is nested deeper than " + std::to_string(opt_.max_depth) + " levels");
    return res_ != nullptr || levels <= max;
  }

  bool end(bool object, std::size_t off, std::size_t depth) {
    Frame &f = w_.frames.back();
    if (object && opt_.unique_keys) {
      w_.keys.resize(f.key_base);
      if (f.set >= 0) {
        w_.sets[static_cast<std::size_t>(f.set)].clear();
        --w_.sets_used;
      }
    }
    w_.frames.pop_back();
    if (depth == 1) value_ends(off + 1);
    return true;
  }

  bool element(std::size_t off, std::size_t depth) {
    if (++w_.frames.back().items == opt_.max_items + 1 && opt_.max_items != kNoLimit &&
        !limit(Fault::items, off, "an array holds more than " + std::to_string(opt_.max_items) + " items"))
      return false;
    if (depth == 1 && elements_ != nullptr) elements_->push_back({off, 0});
    return true;
  }

  bool member(std::size_t off, std::size_t depth) {
    if (depth == 1) ++member_index_;
    if (++w_.frames.back().items == opt_.max_items + 1 && opt_.max_items != kNoLimit &&
        !limit(Fault::members, off, "an object holds more than " + std::to_string(opt_.max_items) + " members"))
      return false;
    if (depth == 1 && members_ != nullptr) members_->push_back({});
    return true;
  }

  bool key(std::size_t off, std::size_t len, bool escaped, std::size_t depth) {
    const std::string_view raw = text_.substr(off + 1, len - 2);
    if (depth == 1 && members_ != nullptr) {
      if (escaped)
        scan::unescape(raw, members_->back().key);
      else
        members_->back().key.assign(raw);
    }
    return !opt_.unique_keys || unique(off, raw, escaped);
  }

  bool scalar(scan::Kind kind, std::size_t off, std::size_t len, bool, std::size_t depth) {
    if (depth == 1) value_starts(off);
    if (kind == scan::Kind::number && !scan::within_double_range(text_.substr(off, len))) {
      std::string shown_number(text_.substr(off, std::min<std::size_t>(len, 40)));
      if (len > 40) shown_number += "…";
      if (!limit(Fault::number_range, off,
                 "the number " + shown_number + " is beyond the range of a double (about ±1.8e308)"))
        return false;
    }
    if (depth == 1) value_ends(off + len);
    return true;
  }

  // Records the scanner's problem (a syntax fault) in the CheckResult.
  void finish(const scan::Error &e) {
    if (res_ == nullptr || e.ok() || e.fault == scan::Fault::stopped) return;
    res_->error = Problem{fault_of(e.fault), e.offset, top_member(), describe(e, text_)};
  }

 private:
  // Records limit fault f; false (stop) without a CheckResult.
  bool limit(Fault f, std::size_t at, std::string what) {
    if (res_ == nullptr) return false;
    ++res_->limit_faults;
    const long m = top_member();
    if (m >= 0 && (res_->fault_members.empty() || res_->fault_members.back() != m)) res_->fault_members.push_back(m);
    if (res_->limits.size() < 16) res_->limits.push_back(Problem{f, at, m, std::move(what)});
    return true;
  }

  long top_member() const { return w_.frames.empty() || !top_object_ ? -1 : member_index_; }

  // A value of the top-level container starts / ends at `off`.
  void value_starts(std::size_t off) {
    if (top_object_ && members_ != nullptr && !members_->empty()) members_->back().value.off = off;
  }
  void value_ends(std::size_t off) {
    Span *v = nullptr;
    if (top_object_) {
      if (members_ != nullptr && !members_->empty()) v = &members_->back().value;
    } else if (elements_ != nullptr && !elements_->empty()) {
      v = &elements_->back();
    }
    if (v != nullptr) v->len = off - v->off;
  }

  // Registers the key at `off` (its content `raw`) in the innermost object; a second one is a fault.
  bool unique(std::size_t off, std::string_view raw, bool escaped) {
    std::string_view k = raw;
    if (escaped) {  // compare keys as they read, not as they were escaped
      std::string &d = w_.decoded.emplace_back();
      scan::unescape(raw, d);
      k = d;
    }
    if (!seen_before(k)) return true;
    return limit(Fault::duplicate_key, off,
                 "the key \"" + std::string(k.substr(0, 60)) + "\" appears twice in one object");
  }

  bool seen_before(std::string_view k) {
    Workspace &w = w_;
    Frame &f = w.frames.back();
    if (f.set >= 0) return !w.sets[static_cast<std::size_t>(f.set)].insert(k).second;
    for (std::size_t i = f.key_base; i < w.keys.size(); ++i)
      if (w.keys[i] == k) return true;
    w.keys.push_back(k);
    if (w.keys.size() - f.key_base > kLinearKeys) {  // many keys: a hash set from here on
      if (w.sets_used == w.sets.size()) w.sets.emplace_back();
      f.set = static_cast<int>(w.sets_used++);
      auto &set = w.sets[static_cast<std::size_t>(f.set)];
      set.insert(w.keys.begin() + static_cast<std::ptrdiff_t>(f.key_base), w.keys.end());
    }
    return false;
  }

  std::string_view text_;
  const CheckOptions &opt_;
  CheckResult *res_;
  Workspace &w_;  // (looked up once: a thread_local behind a function costs a check on every access)
  std::vector<Member> *members_;
  std::vector<Span> *elements_;
  bool top_object_ = false;
  long member_index_ = -1;
};

const CheckOptions kStrict{};  // kMaxDepth, no item limit, repeated keys allowed

// The first character after leading whitespace ('\0' when none).
char first_char(std::string_view text) {
  const std::size_t b = text.find_first_not_of(" \t\n\r");
  return b == std::string_view::npos ? '\0' : text[b];
}

}  // namespace

bool valid(std::string_view text) {
  Checker c(text, kStrict, nullptr, nullptr, nullptr);
  return scan::scan(text, c).ok();
}

bool object_members(std::string_view text, std::vector<Member> &out) {
  out.clear();
  Checker c(text, kStrict, nullptr, &out, nullptr);
  if (first_char(text) != '{' || !scan::scan(text, c).ok()) {
    out.clear();
    return false;
  }
  return true;
}

bool array_elements(std::string_view text, std::vector<Span> &out) {
  out.clear();
  Checker c(text, kStrict, nullptr, nullptr, &out);
  if (first_char(text) != '[' || !scan::scan(text, c).ok()) {
    out.clear();
    return false;
  }
  return true;
}

void check(std::string_view text, const CheckOptions &opt, CheckResult &result, std::vector<Member> *members) {
  result = CheckResult{};
  if (members != nullptr) members->clear();
  result.object = first_char(text) == '{';
  result.array = first_char(text) == '[';
  Checker c(text, opt, &result, members, nullptr);
  c.finish(scan::scan(text, c));
  if (result.error.fault != Fault::none) {
    result.limits.clear();
    result.limit_faults = 0;
    result.fault_members.clear();
    if (members != nullptr) members->clear();
  }
}

std::size_t column_of(std::string_view line, std::size_t offset) {
  std::size_t col = 1;
  for (std::size_t i = 0; i < offset && i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++col;
  return col;
}

std::string excerpt(std::string_view text, std::size_t offset) {
  if (offset >= text.size()) return "";
  std::string_view rest = text.substr(offset);
  constexpr std::size_t kMax = 40;
  std::size_t n = rest.size();
  if (n > kMax) {
    n = kMax;
    while (n > 0 && (static_cast<unsigned char>(rest[n]) & 0xC0) == 0x80) --n;
  }
  std::string out = printable(rest.substr(0, n));
  if (n < rest.size()) out += "…";
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += (c < 0x20 || c == 0x7F) ? ' ' : static_cast<char>(c);
      ++i;
      continue;
    }
    std::size_t n = utf8::sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::size_t invalid_utf8(std::string_view s) { return utf8::first_invalid(s); }

void append_string(std::string &out, std::string_view s) {
  out.push_back('"');
  std::size_t run = 0;  // start of the bytes not yet copied
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) continue;
    std::size_t n = c >= 0x80 ? utf8::sequence_length(s, i) : 0;
    if (n > 0) {
      i += n - 1;
      continue;
    }
    out.append(s.data() + run, i - run);
    run = i + 1;
    if (c >= 0x80)
      out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not UTF-8
    else
      utf8::append_json_escape(out, c);
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

}  // namespace evalgraph::rawjson
