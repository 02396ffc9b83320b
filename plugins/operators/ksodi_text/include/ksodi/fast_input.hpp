// A fast reader for the input object the host sends to a KSODI operator (header-only).
//
// Why: parsing the whole input into a nlohmann DOM (a ~4 KB object with retrieved_docs) cost more than the
// operators' own work. This reader scans the top-level object once, keeps only the members a node asks for,
// and hands out their strings as views into the input text where they hold no escapes.
//
// It covers what the host sends: dataset fields as the dataset wrote them (\u escapes too), node outputs.
// Anything else — a malformed or unusual input, a lone surrogate escape, invalid UTF-8, a duplicate member —
// makes parse() return false, and the plugin then takes its nlohmann path, so results and error messages stay
// exactly those of a full parse. Every value is validated (also those of members the node does not read), so
// an input the fast path accepts is one nlohmann accepts too.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ksodi/json_input.hpp"

namespace ksodi::fast {

struct Value {
  enum Kind { Absent, Null, String, Other };  // Other: a number, a boolean, an array or an object
  Kind kind = Absent;
  std::string_view raw;    // the value's JSON text (for a string: with its quotes)
  std::string_view plain;  // String without escapes: the content, a view into the input
  std::string decoded;     // String with escapes: the decoded content
  bool escaped = false;
  std::string_view str() const { return escaped ? std::string_view(decoded) : plain; }
  bool is_string() const { return kind == String; }
};

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  void ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    ws();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    ws();
    return p_ < s_.size() && s_[p_] == c;
  }
  bool at_end() {
    ws();
    return p_ == s_.size();
  }

  // Four hex digits at i as a code point; false if they are not there.
  bool hex4(std::size_t i, std::uint32_t &cp) const {
    if (i + 4 > s_.size()) return false;
    cp = 0;
    for (std::size_t k = i; k < i + 4; ++k) {
      char h = s_[k];
      int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
      if (d < 0) return false;
      cp = (cp << 4) | static_cast<std::uint32_t>(d);
    }
    return true;
  }

  static void append_utf8(std::string &out, std::uint32_t cp) {
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

  // A string at the current position (after whitespace). Validates UTF-8 (RFC 3629, as nlohmann does) and
  // rejects raw control characters; decodes the escapes, \uXXXX with surrogate pairs included.
  bool string(Value &v) {
    ws();
    if (p_ >= s_.size() || s_[p_] != '"') return false;
    const std::size_t open = p_++;
    const std::size_t begin = p_;
    v.escaped = false;
    v.decoded.clear();
    std::size_t run = begin;  // start of the not yet copied part (escaped strings only)
    while (p_ < s_.size()) {
      // Eight plain bytes at a time (most of a text is printable ASCII).
      while (p_ + 8 <= s_.size()) {
        std::uint64_t w;
        std::memcpy(&w, s_.data() + p_, 8);
        if (const std::uint64_t m = special8(w); m != 0) {
          // Straight to the first special byte (the lowest flagged byte is always a true hit), so that a
          // non-ASCII character does not cost up to eight re-reads of the same word.
          p_ += static_cast<std::size_t>(__builtin_ctzll(m) >> 3);
          break;
        }
        p_ += 8;
      }
      if (p_ >= s_.size()) break;
      unsigned char c = static_cast<unsigned char>(s_[p_]);
      if (c == '"') {
        if (v.escaped) v.decoded.append(s_.substr(run, p_ - run));
        else v.plain = s_.substr(begin, p_ - begin);
        ++p_;
        v.kind = Value::String;
        v.raw = s_.substr(open, p_ - open);
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (p_ + 1 >= s_.size()) return false;
        char r;
        switch (s_[p_ + 1]) {
          case '"': r = '"'; break;
          case '\\': r = '\\'; break;
          case '/': r = '/'; break;
          case 'b': r = '\b'; break;
          case 'f': r = '\f'; break;
          case 'n': r = '\n'; break;
          case 'r': r = '\r'; break;
          case 't': r = '\t'; break;
          case 'u': r = 0; break;  // \uXXXX, below
          default: return false;  // not an escape: the full parser words the error
        }
        if (!v.escaped) {
          v.escaped = true;
          v.decoded.reserve(64);
        }
        v.decoded.append(s_.substr(run, p_ - run));
        if (s_[p_ + 1] == 'u') {
          // Python's json.dumps writes every non-ASCII character so (ensure_ascii): decode it here rather than
          // send such inputs down the slow path. A lone or unpaired surrogate is left to the full parser.
          std::uint32_t cp = 0;
          if (!hex4(p_ + 2, cp) || (cp >= 0xDC00 && cp <= 0xDFFF)) return false;
          p_ += 6;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t lo = 0;
            if (p_ + 1 >= s_.size() || s_[p_] != '\\' || s_[p_ + 1] != 'u' || !hex4(p_ + 2, lo) || lo < 0xDC00 ||
                lo > 0xDFFF)
              return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p_ += 6;
          }
          append_utf8(v.decoded, cp);
        } else {
          v.decoded.push_back(r);
          p_ += 2;
        }
        run = p_;
        continue;
      }
      if (c < 0x80) {
        ++p_;
        continue;
      }
      std::size_t len = utf8_len(p_);
      if (len == 0) return false;
      p_ += len;
    }
    return false;
  }

  // Reads (and fully validates) any value; records its text and kind. Containers are checked recursively, up
  // to a nesting depth of 256 (deeper input takes the full parser).
  bool skip(Value &v, int depth = 0) {
    ws();
    if (p_ >= s_.size() || depth > 256) return false;
    const char c = s_[p_];
    if (c == '"') return string(v);
    const std::size_t b = p_;
    if (c == '{' || c == '[') {
      Value tmp;
      bool ok = c == '{' ? object([&](std::string_view) { return skip(tmp, depth + 1); }) : array([&] { return skip(tmp, depth + 1); });
      if (!ok) return false;
      v.kind = Value::Other;
      v.raw = s_.substr(b, p_ - b);
      return true;
    }
    if (literal("null")) v.kind = Value::Null;
    else if (literal("true") || literal("false") || number()) v.kind = Value::Other;
    else return false;
    v.raw = s_.substr(b, p_ - b);
    return true;
  }

  // Iterates the elements of an array at the current position: f() must consume one value.
  template <class F> bool array(F &&f) {
    if (!eat('[')) return false;
    if (eat(']')) return true;
    do {
      if (!f()) return false;
    } while (eat(','));
    return eat(']');
  }

  // Iterates the members of an object at the current position: f(key, reader) must consume the value.
  template <class F> bool object(F &&f) {
    if (!eat('{')) return false;
    if (eat('}')) return true;
    Value key;
    do {
      if (!string(key) || key.escaped || !eat(':')) return false;
      if (!f(key.plain)) return false;
    } while (eat(','));
    return eat('}');
  }

 private:
  // True when one of the 8 bytes of w is '"', '\\', a control character (< 0x20) or not ASCII (>= 0x80).
  // (The classic "has a zero byte" bit tricks: exact as a yes/no answer for the whole word.)
  // The high bit of each byte that may be '"', '\\', a control character or non-ASCII (0 if none); bytes
  // above a true hit may be flagged falsely (borrows), the lowest flagged byte never is.
  static std::uint64_t special8(std::uint64_t w) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    const std::uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    const std::uint64_t zero_q = (q - ones) & ~q, zero_b = (b - ones) & ~b, ctrl = (w - ones * 0x20) & ~w;
    return (zero_q | zero_b | ctrl | w) & high;
  }

  bool literal(std::string_view w) {
    if (s_.substr(p_, w.size()) != w) return false;
    p_ += w.size();
    return true;
  }
  // A number as RFC 8259 spells it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number() {
    auto digit = [&] { return p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9'; };
    auto digits = [&] {
      if (!digit()) return false;
      while (digit()) ++p_;
      return true;
    };
    const std::size_t start = p_;
    if (p_ < s_.size() && s_[p_] == '-') ++p_;
    if (p_ < s_.size() && s_[p_] == '0') ++p_;
    else if (!digits()) return false;
    if (p_ < s_.size() && s_[p_] == '.') {
      ++p_;
      if (!digits()) return false;
    }
    bool exp = false;
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      exp = true;
      ++p_;
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      if (!digits()) return false;
    }
    // A number beyond a double's range (1e999999) takes the full parse, which words the refusal.
    if (exp || p_ - start > 300) return std::isfinite(std::strtod(std::string(s_.substr(start, p_ - start)).c_str(), nullptr));
    return true;
  }

  // Length of the valid UTF-8 sequence at p (0 if invalid): the well-formed ranges of RFC 3629.
  std::size_t utf8_len(std::size_t p) const {
    auto at = [&](std::size_t k) { return p + k < s_.size() ? static_cast<unsigned char>(s_[p + k]) : 0u; };
    auto in = [](unsigned v, unsigned lo, unsigned hi) { return v >= lo && v <= hi; };
    unsigned c = at(0);
    if (in(c, 0xC2, 0xDF)) return in(at(1), 0x80, 0xBF) ? 2 : 0;
    if (c == 0xE0) return in(at(1), 0xA0, 0xBF) && in(at(2), 0x80, 0xBF) ? 3 : 0;
    if (in(c, 0xE1, 0xEC) || c == 0xEE || c == 0xEF) return in(at(1), 0x80, 0xBF) && in(at(2), 0x80, 0xBF) ? 3 : 0;
    if (c == 0xED) return in(at(1), 0x80, 0x9F) && in(at(2), 0x80, 0xBF) ? 3 : 0;
    if (c == 0xF0) return in(at(1), 0x90, 0xBF) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
    if (in(c, 0xF1, 0xF3)) return in(at(1), 0x80, 0xBF) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
    if (c == 0xF4) return in(at(1), 0x80, 0x8F) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
    return 0;
  }

  std::string_view s_;
  std::size_t p_ = 0;
};

// The top-level members named in `keys` (in that order); the others are skipped. False: fall back.
inline bool read_members(std::string_view input, std::initializer_list<const char *> keys, std::vector<Value> &out) {
  out.assign(keys.size(), Value{});
  Reader r(input);
  Value skipped;
  bool ok = r.object([&](std::string_view key) {
    std::size_t i = 0;
    for (const char *k : keys) {
      if (key == k) {
        if (out[i].kind != Value::Absent) return false;  // a duplicate member: the full parser decides
        return r.skip(out[i]);
      }
      ++i;
    }
    return r.skip(skipped);
  });
  return ok && r.at_end();
}

// ksodi::text_of on a Value: absent/null → "", string → as is, anything else → its JSON (as nlohmann dumps it).
inline std::string text_of(const Value &v) {
  if (v.kind == Value::Absent || v.kind == Value::Null) return {};
  if (v.kind == Value::String) return std::string(v.str());
  return nlohmann::json::parse(v.raw).dump();
}

// ksodi::parse_docs on a Value, for the common shapes (an array of {"id","text"} objects or of strings, null,
// absent). False for anything else (a string holding JSON, non-string ids/texts, wrong types): the caller
// then uses parse_docs on a full parse, which also produces the error messages.
inline bool read_docs(const Value &v, const char *id_prefix, std::vector<Doc> &out) {
  out.clear();
  if (v.kind == Value::Absent || v.kind == Value::Null) return true;
  if (v.kind != Value::Other || v.raw.empty() || v.raw[0] != '[') return false;
  Reader r(v.raw);
  r.eat('[');
  if (r.eat(']')) return r.at_end();
  static constexpr const char *kText[] = {"text", "content", "page_content", "output", "result"};
  static constexpr const char *kId[] = {"id", "doc_id", "name", "tool", "source"};
  std::size_t i = 0;
  Value tmp;
  do {
    ++i;
    Doc d;
    if (r.peek('"')) {
      if (!r.string(tmp)) return false;
      d.id = std::string(id_prefix) + std::to_string(i);
      d.text = std::string(tmp.str());
    } else if (r.peek('{')) {
      Value text[5], id[5];
      bool ok = r.object([&](std::string_view key) {
        for (int k = 0; k < 5; ++k) {
          if (key == kText[k]) return text[k].kind == Value::Absent && r.skip(text[k]);
          if (key == kId[k]) return id[k].kind == Value::Absent && r.skip(id[k]);
        }
        return r.skip(tmp);
      });
      if (!ok) return false;
      const Value *t = nullptr;
      for (const Value &c : text)
        if (c.kind != Value::Absent && c.kind != Value::Null) {
          t = &c;
          break;
        }
      if (t == nullptr || t->kind != Value::String) return false;  // missing (an error) or needs dump()
      d.text = std::string(t->str());
      d.id = std::string(id_prefix) + std::to_string(i);
      for (const Value &c : id)
        if (c.kind != Value::Absent && c.kind != Value::Null) {
          if (c.kind != Value::String) return false;
          d.id = std::string(c.str());
          break;
        }
    } else {
      return false;
    }
    out.push_back(std::move(d));
  } while (r.eat(','));
  return r.eat(']') && r.at_end();
}

}  // namespace ksodi::fast
