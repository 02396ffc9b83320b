// Writes a node's output JSON text directly, byte for byte as nlohmann::json's dump() of the equivalent DOM
// would (header-only).
//
// Why: building a nlohmann DOM of the output (a std::map per object, a std::string per key and string value)
// and then dumping it cost more than computing the values. The text must stay exactly what the DOM gave:
//  - members of an object come in nlohmann's order, which is the sorted order of std::map<std::string>: the
//    caller writes them sorted, and key() checks that (a std::logic_error names the offending key, so a
//    future edit cannot silently change the output);
//  - strings are escaped as dump(-1, ' ', false, replace) escapes them (\" \\ \b \f \n \r \t, other control
//    characters as \u00xx, everything else as is); a string that is not valid UTF-8 goes through nlohmann;
//  - doubles are printed by nlohmann's own shortest round-trip formatter (detail::to_chars), non-finite as
//    null; integers in plain decimal.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ksodi {

class JsonWriter {
 public:
  explicit JsonWriter(std::string &out) : out_(out) {}

  void begin_object() {
    value_prefix();
    out_.push_back('{');
    stack_.push_back({true, true, {}});
  }
  void end_object() {
    out_.push_back('}');
    stack_.pop_back();
  }
  void begin_array() {
    value_prefix();
    out_.push_back('[');
    stack_.push_back({false, true, {}});
  }
  void end_array() {
    out_.push_back(']');
    stack_.pop_back();
  }

  // A member name; `k` must outlive the enclosing object (string literals, static names).
  void key(std::string_view k) {
    Level &l = stack_.back();
    if (!l.first && !(l.last_key < k))
      throw std::logic_error("JsonWriter: key '" + std::string(k) + "' after '" + std::string(l.last_key) +
                             "' (members must be written in sorted order)");
    if (!l.first) out_.push_back(',');
    l.first = false;
    l.last_key = k;
    string_body(k);
    out_.push_back(':');
    after_key_ = true;
  }

  void string(std::string_view s) {
    value_prefix();
    string_body(s);
  }
  void null() {
    value_prefix();
    out_.append("null");
  }
  void boolean(bool b) {
    value_prefix();
    out_.append(b ? "true" : "false");
  }
  void number(double v) {
    value_prefix();
    if (!std::isfinite(v)) {
      out_.append("null");
      return;
    }
    char buf[64];
    char *end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, static_cast<std::size_t>(end - buf));
  }
  void number(std::int64_t v) {
    value_prefix();
    out_.append(std::to_string(v));
  }
  void number(int v) { number(static_cast<std::int64_t>(v)); }
  void number(std::size_t v) {
    value_prefix();
    out_.append(std::to_string(v));
  }
  // Any other value, through nlohmann (cold: parameters, evidence maps).
  void json(const nlohmann::json &j) {
    value_prefix();
    out_.append(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  // Convenience: key + value.
  template <class V> void member(std::string_view k, const V &v) {
    key(k);
    put(v);
  }
  void member_null(std::string_view k) {
    key(k);
    null();
  }

 private:
  struct Level {
    bool object;
    bool first;
    std::string_view last_key;
  };

  void put(double v) { number(v); }
  void put(int v) { number(v); }
  void put(std::size_t v) { number(v); }
  void put(bool v) { boolean(v); }
  void put(std::string_view v) { string(v); }
  void put(const std::string &v) { string(v); }
  void put(const char *v) { string(v); }
  void put(const nlohmann::json &v) { json(v); }

  void value_prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (stack_.empty()) return;
    Level &l = stack_.back();
    if (!l.first) out_.push_back(',');
    l.first = false;
  }

  // Length of the valid UTF-8 sequence at s[i] (a lead byte >= 0x80); 0 if invalid (RFC 3629 ranges, as
  // nlohmann's decoder checks them).
  static std::size_t utf8_len(std::string_view s, std::size_t i) {
    auto in = [](unsigned v, unsigned lo, unsigned hi) { return v >= lo && v <= hi; };
    auto at = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
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

  // True when one of the 8 bytes at p is '"', '\\', a control character (< 0x20) or not ASCII (>= 0x80).
  static bool special8(const char *p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    const std::uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    return ((((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & high) != 0;
  }

  void string_body(std::string_view s) {
    const std::size_t mark = out_.size();
    out_.push_back('"');
    std::size_t run = 0, i = 0;
    const std::size_t n = s.size();
    while (i < n) {
      if (i + 8 <= n && !special8(s.data() + i)) {
        i += 8;
        continue;
      }
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (c >= 0x80) {
        std::size_t len = utf8_len(s, i);
        if (len == 0) {  // not valid UTF-8: nlohmann's replacement rules decide
          out_.resize(mark);
          out_.append(nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
          return;
        }
        i += len;
        continue;
      }
      if (c >= 0x20 && c != '"' && c != '\\') {
        ++i;
        continue;
      }
      out_.append(s.substr(run, i - run));
      run = i + 1;
      switch (c) {
        case '"': out_.append("\\\""); break;
        case '\\': out_.append("\\\\"); break;
        case '\b': out_.append("\\b"); break;
        case '\f': out_.append("\\f"); break;
        case '\n': out_.append("\\n"); break;
        case '\r': out_.append("\\r"); break;
        case '\t': out_.append("\\t"); break;
        default: {
          static const char hex[] = "0123456789abcdef";
          char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
          out_.append(u, 6);
        }
      }
      ++i;
    }
    out_.append(s.substr(run));
    out_.push_back('"');
  }

  std::string &out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace ksodi
