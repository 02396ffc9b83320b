#include "util/raw_json.h"

#include "evalgraph/text.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <string>
#include <unordered_set>

#include "evalgraph/utf8.hpp"

namespace evalgraph::rawjson {

namespace {

// Where a scan keeps its stack of open containers and the keys of open objects. One per thread, reused from
// scan to scan (a scan never starts another on the same thread), so checking a record allocates nothing once
// the vectors have grown.
struct Frame {
  bool object = false;
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

std::string printable(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7F) return std::string("'") + c + "'";
  static const char kHex[] = "0123456789ABCDEF";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 0xF];
}

// An iterative scanner over [p, e): containers are kept on Workspace::frames, never on the call stack.
// Without a CheckResult every fault ends the scan with false (valid(), object_members(), ...). With one,
// syntax faults end it and limit faults are recorded while the scan goes on.
class Scanner {
 public:
  Scanner(const char *b, const char *e, const CheckOptions &opt, CheckResult *res)
      : begin_(b), p_(b), e_(e), opt_(opt), res_(res), w_(workspace()) {}

  void ws() {
    while (p_ != e_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool at_end() const { return p_ == e_; }
  bool peek(char c) const { return p_ != e_ && *p_ == c; }
  std::size_t offset() const { return static_cast<std::size_t>(p_ - begin_); }

  // One JSON value and nothing after it but whitespace. `members` / `elements`: the top level's pieces.
  bool document(std::vector<Member> *members, std::vector<Span> *elements) {
    Workspace &w = w_;
    w.frames.clear();
    w.keys.clear();
    w.decoded.clear();
    w.sets_used = 0;
    members_ = members;
    elements_ = elements;
    ws();
    if (res_ != nullptr) {
      res_->object = peek('{');
      res_->array = peek('[');
    }
    for (;;) {
      // ---- a value starts here
      if (p_ == e_) return fail(Fault::end_of_text, offset(), "the text ends where a value should be");
      const char c = *p_;
      bool done = true;  // a complete value was read (false: a container was opened and awaits its content)
      if (c == '{' || c == '[') {
        if (!open(c == '{')) return false;
        ws();
        if (peek(c == '{' ? '}' : ']')) {
          ++p_;
          close();
        } else {
          if (c == '{' ? !key() : !item()) return false;
          done = false;
        }
      } else if (c == '"') {
        if (!string(nullptr)) return false;
      } else if (c == 't' || c == 'f' || c == 'n') {
        if (!literal(c == 't' ? "true" : c == 'f' ? "false" : "null")) return false;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (!number()) return false;
      } else {
        return fail(Fault::syntax, offset(), unexpected_value(c));
      }
      if (!done) continue;
      // ---- after a value: ',' or the end of its container, level by level
      for (;;) {
        if (w.frames.empty()) {
          ws();
          if (p_ != e_) return fail(Fault::trailing, offset(), "there is more text after the end of the value");
          return true;
        }
        if (w.frames.size() == 1) end_top_value();
        ws();
        const Frame &f = w.frames.back();
        if (p_ == e_)
          return fail(Fault::end_of_text, offset(),
                      f.object ? "the text ends inside an object (a '}' is missing)"
                               : "the text ends inside an array (a ']' is missing)");
        if (*p_ == ',') {
          ++p_;
          ws();
          if (f.object ? !key() : !item()) return false;
          break;  // to the next value
        }
        if (*p_ == (f.object ? '}' : ']')) {
          ++p_;
          close();
          continue;
        }
        return fail(Fault::syntax, offset(),
                    std::string(f.object ? "expected ',' or '}' after an object member, found "
                                         : "expected ',' or ']' after an array item, found ") +
                        printable(*p_));
      }
    }
  }

  // A string literal at p_ ('"'); its unescaped content goes to `out` when non-null.
  bool string(std::string *out) {
    const char *open = p_;
    ++p_;
    escaped_ = false;
    for (;;) {
      const char *run = p_;
      // The common case: plain ASCII up to the closing quote, eight bytes at a time while none of them is
      // '"', '\\', a control character or a non-ASCII byte; the byte loop below then finds which one is.
      while (e_ - p_ >= 8 && plain8(p_)) p_ += 8;
      while (p_ != e_) {
        auto c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++p_;
      }
      if (out != nullptr) out->append(run, static_cast<std::size_t>(p_ - run));
      if (p_ == e_)
        return fail(Fault::end_of_text, static_cast<std::size_t>(open - begin_),
                    "a string is not closed (its closing '\"' is missing)");
      auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) {
        if (c == 0)
          return fail(Fault::control_char, offset(),
                      "a NUL byte inside a string (a file with NUL bytes may be UTF-16: convert it to UTF-8)");
        static const char kHex[] = "0123456789abcdef";
        std::string esc = std::string("\\u00") + kHex[c >> 4] + kHex[c & 0xF];
        return fail(Fault::control_char, offset(),
                    "a raw control character (U+00" + esc.substr(4) + ") inside a string; write it escaped as " +
                        (c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : esc));
      }
      if (c >= 0x80) {
        const char *s = p_;
        if (!utf8()) {
          p_ = s;
          return fail(Fault::bad_utf8, offset(),
                      "bytes that are not UTF-8 (" + printable(*s) +
                          "); save the file as UTF-8, e.g. iconv -f WINDOWS-1252 -t UTF-8");
        }
        if (out != nullptr) out->append(s, static_cast<std::size_t>(p_ - s));
        continue;
      }
      // A backslash escape.
      escaped_ = true;
      const char *esc_at = p_;
      ++p_;
      if (p_ == e_)
        return fail(Fault::end_of_text, static_cast<std::size_t>(open - begin_),
                    "a string is not closed (its closing '\"' is missing)");
      char esc = *p_++;
      const char plain = utf8::json_unescape(esc);
      if (plain == 0)
        return fail(Fault::bad_escape, static_cast<std::size_t>(esc_at - begin_),
                    "\\" + std::string(1, esc) +
                        " is no JSON escape (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; write a backslash as \\\\)");
      if (plain == 'u') {
        std::uint32_t cp = 0;
        auto bad = [&](const char *what) {
          return fail(Fault::bad_escape, static_cast<std::size_t>(esc_at - begin_), what);
        };
        if (!hex4(cp)) return bad("\\u must be followed by four hex digits");
        if (cp >= 0xDC00 && cp <= 0xDFFF) return bad("a \\u escape of a low surrogate without its high surrogate");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          std::uint32_t lo = 0;
          if (e_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
            return bad("a \\u escape of a high surrogate without its low surrogate");
          p_ += 2;
          if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF)
            return bad("a \\u escape of a high surrogate without its low surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (out != nullptr) text::append_utf8(*out, static_cast<char32_t>(cp));
        continue;
      }
      if (out != nullptr) out->push_back(plain);
    }
  }

  // utf8() for append_string's check of text that is not inside a JSON literal.
  bool skip_utf8() { return utf8(); }

 private:
  // Records a fault. Returns false when the scan must stop: every fault without a CheckResult, and syntax
  // faults with one. Limit faults with a CheckResult are recorded and the scan goes on (true).
  bool fail(Fault f, std::size_t at, std::string what) {
    if (res_ == nullptr) return false;
    if (!is_limit(f)) {
      if (res_->error.fault == Fault::none) res_->error = Problem{f, at, top_member(), std::move(what)};
      return false;
    }
    ++res_->limit_faults;
    const long m = top_member();
    if (m >= 0 && (res_->fault_members.empty() || res_->fault_members.back() != m)) res_->fault_members.push_back(m);
    if (res_->limits.size() < 16) res_->limits.push_back(Problem{f, at, m, std::move(what)});
    return true;
  }

  long top_member() const { return w_.frames.empty() || !top_object_ ? -1 : member_index_; }

  static std::string unexpected_value(char c) {
    if (c == '}' || c == ']') return "a value is missing before " + printable(c) + " (a comma too many?)";
    if (c == ',') return "a value is missing before ','";
    if (c == '\'') return "strings are written in double quotes, not single quotes";
    if (c == 'N' || c == 'I') return "NaN and Infinity are not JSON; write null (or the value as a string)";
    if (c == 'T' || c == 'F') return "true and false are written in lower case";
    return "expected a value (a string, number, object, array, true, false or null), found " + printable(c);
  }

  bool open(bool object) {
    Workspace &w = w_;
    if (w.frames.empty()) top_object_ = object;
    w.frames.push_back(Frame{object, 0, w.keys.size(), -1});
    ++p_;
    if (static_cast<long>(w.frames.size()) == static_cast<long>(opt_.max_depth) + 1) {
      std::string what = "the value is nested deeper than " + std::to_string(opt_.max_depth) + " levels";
      if (!fail(Fault::depth, offset() - 1, std::move(what))) return false;
      if (res_ == nullptr) return false;
    } else if (res_ == nullptr && static_cast<long>(w.frames.size()) > static_cast<long>(opt_.max_depth)) {
      return false;
    }
    return true;
  }

  void close() {
    Workspace &w = w_;
    Frame &f = w.frames.back();
    if (f.object && opt_.unique_keys) {
      w.keys.resize(f.key_base);
      if (f.set >= 0) {
        w.sets[static_cast<std::size_t>(f.set)].clear();
        --w.sets_used;
      }
    }
    w.frames.pop_back();
  }

  // An array element is about to start.
  bool item() {
    Workspace &w = w_;
    Frame &f = w.frames.back();
    if (++f.items == opt_.max_items + 1 && opt_.max_items != std::numeric_limits<std::size_t>::max()) {
      if (!fail(Fault::items, offset(), "an array holds more than " + std::to_string(opt_.max_items) + " items"))
        return false;
      if (res_ == nullptr) return false;
    }
    if (w.frames.size() == 1 && elements_ != nullptr) elements_->push_back({offset(), 0});
    return true;
  }

  // An object member's key, its ':' and the whitespace up to its value.
  bool key() {
    Workspace &w = w_;
    if (!peek('"')) {
      if (p_ == e_) return fail(Fault::end_of_text, offset(), "the text ends inside an object (a '}' is missing)");
      if (*p_ == '}') return fail(Fault::syntax, offset(), "a member is missing before '}' (a comma too many?)");
      return fail(Fault::syntax, offset(), "expected a key in double quotes, found " + printable(*p_));
    }
    const bool top = w.frames.size() == 1;
    if (top) ++member_index_;
    if (++w.frames.back().items == opt_.max_items + 1 && opt_.max_items != std::numeric_limits<std::size_t>::max()) {
      if (!fail(Fault::members, offset(), "an object holds more than " + std::to_string(opt_.max_items) + " members"))
        return false;
      if (res_ == nullptr) return false;
    }
    const char *kb = p_;
    std::string *out = nullptr;
    if (top && members_ != nullptr) {
      members_->push_back({});
      out = &members_->back().key;
    }
    if (!string(out)) return false;
    if (opt_.unique_keys && !unique(kb)) return false;
    ws();
    if (!peek(':')) {
      if (p_ == e_) return fail(Fault::end_of_text, offset(), "the text ends inside an object (a '}' is missing)");
      return fail(Fault::syntax, offset(), "expected ':' after the key, found " + printable(*p_));
    }
    ++p_;
    ws();
    if (top && members_ != nullptr) members_->back().value.off = offset();
    return true;
  }

  // Registers the key that starts at kb (ends at p_) in the innermost object; a second one is a fault.
  bool unique(const char *kb) {
    Workspace &w = w_;
    std::string_view raw(kb + 1, static_cast<std::size_t>(p_ - kb - 2));
    std::string_view k = raw;
    if (escaped_) {  // compare keys as they read, not as they were escaped
      std::string &d = w.decoded.emplace_back();
      Scanner sub(kb, p_, opt_, nullptr);
      sub.string(&d);
      k = d;
    }
    Frame &f = w.frames.back();
    const std::size_t n = w.keys.size() - f.key_base;
    bool seen = false;
    if (f.set >= 0) {
      seen = !w.sets[static_cast<std::size_t>(f.set)].insert(k).second;
    } else {
      for (std::size_t i = f.key_base; i < w.keys.size() && !seen; ++i) seen = w.keys[i] == k;
      if (!seen) {
        w.keys.push_back(k);
        if (n + 1 > kLinearKeys) {  // many keys: a hash set from here on
          if (w.sets_used == w.sets.size()) w.sets.emplace_back();
          f.set = static_cast<int>(w.sets_used++);
          auto &set = w.sets[static_cast<std::size_t>(f.set)];
          set.insert(w.keys.begin() + static_cast<std::ptrdiff_t>(f.key_base), w.keys.end());
        }
      }
    }
    if (!seen) return true;
    std::string shown(k.substr(0, 60));
    if (!fail(Fault::duplicate_key, static_cast<std::size_t>(kb - begin_),
              "the key \"" + shown + "\" appears twice in one object"))
      return false;
    return res_ != nullptr;
  }

  void end_top_value() {
    if (top_object_) {
      if (members_ != nullptr && !members_->empty()) {
        Span &v = members_->back().value;
        v.len = offset() - v.off;
      }
    } else if (elements_ != nullptr && !elements_->empty()) {
      Span &v = elements_->back();
      v.len = offset() - v.off;
    }
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(e_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
      if (static_cast<std::size_t>(e_ - p_) < word.size() && std::string_view(p_, static_cast<std::size_t>(e_ - p_)) ==
                                                                  word.substr(0, static_cast<std::size_t>(e_ - p_)))
        return fail(Fault::end_of_text, offset(), "the text ends inside the literal " + std::string(word));
      return fail(Fault::syntax, offset(), "invalid literal; JSON has true, false and null (in lower case)");
    }
    p_ += word.size();
    return true;
  }

  bool digits() {
    const char *s = p_;
    while (p_ != e_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ != s;
  }

  bool number() {
    const char *start = p_;
    bool exp = false;
    auto bad = [&](const char *what) { return fail(Fault::syntax, static_cast<std::size_t>(start - begin_), what); };
    if (peek('-')) ++p_;
    if (peek('0')) {
      ++p_;
      if (p_ != e_ && *p_ >= '0' && *p_ <= '9') return bad("a number must not start with 0 (leading zeros are not JSON)");
    } else if (p_ == e_ || *p_ < '1' || *p_ > '9' || !digits()) {
      return bad("invalid number ('-' must be followed by digits)");
    }
    if (peek('.')) {
      ++p_;
      if (!digits()) return bad("invalid number (a '.' must be followed by digits)");
    }
    if (peek('e') || peek('E')) {
      exp = true;
      ++p_;
      if (peek('+') || peek('-')) ++p_;
      if (!digits()) return bad("invalid number (an exponent needs digits)");
    }
    // A number too large for a double (1e999) is refused, as nlohmann refuses it.
    if ((exp || p_ - start > 300) && !std::isfinite(std::strtod(std::string(start, p_).c_str(), nullptr))) {
      std::string text(start, static_cast<std::size_t>(std::min<std::ptrdiff_t>(p_ - start, 40)));
      if (p_ - start > 40) text += "…";
      if (!fail(Fault::number_range, static_cast<std::size_t>(start - begin_),
                "the number " + text + " is beyond the range of a double (about ±1.8e308)"))
        return false;
      return res_ != nullptr;
    }
    return true;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool hex4(std::uint32_t &cp) {
    if (e_ - p_ < 4) return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hex(p_[i]);
      if (h < 0) return false;
      cp = (cp << 4) | static_cast<std::uint32_t>(h);
    }
    p_ += 4;
    return true;
  }

  // One UTF-8 sequence starting at p_ (a byte >= 0x80): well-formed, shortest form, no surrogates, <= U+10FFFF.
  bool utf8() {
    const auto *u = reinterpret_cast<const unsigned char *>(p_);
    std::ptrdiff_t left = e_ - p_;
    auto cont = [&](int i) { return i < left && (u[i] & 0xC0) == 0x80; };
    unsigned char c = u[0];
    if (c >= 0xC2 && c <= 0xDF) {
      if (!cont(1)) return false;
      p_ += 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      if (!cont(1) || !cont(2)) return false;
      if (c == 0xE0 && u[1] < 0xA0) return false;  // overlong
      if (c == 0xED && u[1] > 0x9F) return false;  // surrogates
      p_ += 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      if (!cont(1) || !cont(2) || !cont(3)) return false;
      if (c == 0xF0 && u[1] < 0x90) return false;  // overlong
      if (c == 0xF4 && u[1] > 0x8F) return false;  // above U+10FFFF
      p_ += 4;
    } else {
      return false;
    }
    return true;
  }

  // True if none of the 8 bytes at p needs a closer look (SWAR: a byte-wise "has zero" / "has less than" test).
  static bool plain8(const char *p) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    std::uint64_t v = 0;
    std::memcpy(&v, p, 8);
    auto has_zero = [&](std::uint64_t x) { return (x - ones) & ~x & high; };
    std::uint64_t flagged = (v & high)                          // >= 0x80
                            | ((v - 0x20 * ones) & ~v & high)   // < 0x20
                            | has_zero(v ^ (0x22 * ones))       // '"'
                            | has_zero(v ^ (0x5C * ones));      // '\\'
    return flagged == 0;
  }

  const char *begin_;
  const char *p_;
  const char *e_;
  const CheckOptions &opt_;
  CheckResult *res_;
  Workspace &w_;  // (looked up once: a thread_local behind a function costs a check on every access)
  std::vector<Member> *members_ = nullptr;
  std::vector<Span> *elements_ = nullptr;
  bool top_object_ = false;
  bool escaped_ = false;  // the last string held an escape
  long member_index_ = -1;
};

const CheckOptions kStrict{};  // kMaxDepth, no item limit, repeated keys allowed

}  // namespace

bool valid(std::string_view text) {
  Scanner s(text.data(), text.data() + text.size(), kStrict, nullptr);
  return s.document(nullptr, nullptr);
}

bool object_members(std::string_view text, std::vector<Member> &out) {
  out.clear();
  Scanner s(text.data(), text.data() + text.size(), kStrict, nullptr);
  s.ws();
  if (!s.peek('{') || !s.document(&out, nullptr)) {
    out.clear();
    return false;
  }
  return true;
}

bool array_elements(std::string_view text, std::vector<Span> &out) {
  out.clear();
  Scanner s(text.data(), text.data() + text.size(), kStrict, nullptr);
  s.ws();
  if (!s.peek('[') || !s.document(nullptr, &out)) {
    out.clear();
    return false;
  }
  return true;
}

void check(std::string_view text, const CheckOptions &opt, CheckResult &result, std::vector<Member> *members) {
  result = CheckResult{};
  if (members != nullptr) members->clear();
  Scanner s(text.data(), text.data() + text.size(), opt, &result);
  s.document(members, nullptr);
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

std::size_t invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = utf8::sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

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
    if (c >= 0x80) out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not UTF-8
    else utf8::append_json_escape(out, c);
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

}  // namespace evalgraph::rawjson
