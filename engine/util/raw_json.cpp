#include "util/raw_json.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace evalgraph::rawjson {

namespace {

// A recursive-descent checker over [p, e). Each function consumes one token or value and returns false on
// the first error; `p` is then somewhere inside the bad value (callers only need yes or no).
class Scanner {
 public:
  Scanner(const char *b, const char *e) : begin_(b), p_(b), e_(e) {}

  void ws() {
    while (p_ != e_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool at_end() const { return p_ == e_; }
  bool peek(char c) const { return p_ != e_ && *p_ == c; }
  std::size_t offset() const { return static_cast<std::size_t>(p_ - begin_); }

  bool value(int depth) {
    if (p_ == e_) return false;
    switch (*p_) {
      case '{': return object(depth + 1, nullptr);
      case '[': return array(depth + 1, nullptr);
      case '"': return string(nullptr);
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  // members/elements: when non-null, the top level's pieces are recorded.
  bool object(int depth, std::vector<Member> *members) {
    if (depth > kMaxDepth) return false;
    ++p_;  // '{'
    ws();
    if (peek('}')) {
      ++p_;
      return true;
    }
    for (;;) {
      if (!peek('"')) return false;
      std::string key;
      if (!string(members != nullptr ? &key : nullptr)) return false;
      ws();
      if (!peek(':')) return false;
      ++p_;
      ws();
      std::size_t start = offset();
      if (!value(depth)) return false;
      if (members != nullptr) members->push_back({std::move(key), {start, offset() - start}});
      ws();
      if (peek(',')) {
        ++p_;
        ws();
        continue;
      }
      if (!peek('}')) return false;
      ++p_;
      return true;
    }
  }

  bool array(int depth, std::vector<Span> *elements) {
    if (depth > kMaxDepth) return false;
    ++p_;  // '['
    ws();
    if (peek(']')) {
      ++p_;
      return true;
    }
    for (;;) {
      std::size_t start = offset();
      if (!value(depth)) return false;
      if (elements != nullptr) elements->push_back({start, offset() - start});
      ws();
      if (peek(',')) {
        ++p_;
        ws();
        continue;
      }
      if (!peek(']')) return false;
      ++p_;
      return true;
    }
  }

 private:
  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(e_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
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
    if (peek('-')) ++p_;
    if (peek('0')) {
      ++p_;
    } else if (p_ == e_ || *p_ < '1' || *p_ > '9' || !digits()) {
      return false;
    }
    if (peek('.')) {
      ++p_;
      if (!digits()) return false;
    }
    if (peek('e') || peek('E')) {
      exp = true;
      ++p_;
      if (peek('+') || peek('-')) ++p_;
      if (!digits()) return false;
    }
    // A number too large for a double (1e999) is refused, as nlohmann refuses it.
    if (exp || p_ - start > 300) return std::isfinite(std::strtod(std::string(start, p_).c_str(), nullptr));
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

  static void put_utf8(std::string &out, std::uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // utf8() for append_string's check of text that is not inside a JSON literal.
 public:
  bool skip_utf8() { return utf8(); }

 private:
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

  // A string literal at p_ ('"'); its unescaped content goes to `out` when non-null.
  bool string(std::string *out) {
    ++p_;
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
      if (p_ == e_) return false;
      auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return false;  // control characters must be escaped
      if (c >= 0x80) {
        const char *s = p_;
        if (!utf8()) return false;
        if (out != nullptr) out->append(s, static_cast<std::size_t>(p_ - s));
        continue;
      }
      // A backslash escape.
      ++p_;
      if (p_ == e_) return false;
      char esc = *p_++;
      char plain = 0;
      switch (esc) {
        case '"': plain = '"'; break;
        case '\\': plain = '\\'; break;
        case '/': plain = '/'; break;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a low surrogate on its own
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t lo = 0;
            if (e_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          if (out != nullptr) put_utf8(*out, cp);
          continue;
        }
        default: return false;
      }
      if (out != nullptr) out->push_back(plain);
    }
  }

  const char *begin_;
  const char *p_;
  const char *e_;
};

}  // namespace

bool valid(std::string_view text) {
  Scanner s(text.data(), text.data() + text.size());
  s.ws();
  if (!s.value(0)) return false;
  s.ws();
  return s.at_end();
}

bool object_members(std::string_view text, std::vector<Member> &out) {
  out.clear();
  Scanner s(text.data(), text.data() + text.size());
  s.ws();
  if (!s.peek('{') || !s.object(1, &out)) return false;
  s.ws();
  return s.at_end();
}

bool array_elements(std::string_view text, std::vector<Span> &out) {
  out.clear();
  Scanner s(text.data(), text.data() + text.size());
  s.ws();
  if (!s.peek('[') || !s.array(1, &out)) return false;
  s.ws();
  return s.at_end();
}

// The length of the well-formed UTF-8 sequence at s[i] (a byte >= 0x80), or 0 if it is not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  Scanner sc(s.data() + i, s.data() + s.size());
  return sc.skip_utf8() ? sc.offset() : 0;
}

void append_string(std::string &out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run = 0;  // start of the bytes not yet copied
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) continue;
    if (c >= 0x80) {
      std::size_t n = utf8_length(s, i);
      if (n > 0) {
        i += n - 1;
        continue;
      }
    }
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c >= 0x80) {
          out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not UTF-8
        } else {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

}  // namespace evalgraph::rawjson
