#include "io/otlp_scan.h"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <evalgraph/utf8.hpp>

namespace evalgraph::io::otlp {

namespace {

constexpr int kMaxSkipDepth = 1024;  // deeper nesting is no OTLP: the text is given up as malformed
constexpr int kMaxValueDepth = 64;   // AnyValue nesting converted to JSON; deeper is replaced by null

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// End of a string whose opening quote is at p[-1]: the closing quote, or nullptr when the text ends first.
const char *string_end(const char *p, const char *e) {
  const char *start = p;
  for (;;) {
    // Most strings are short (keys, ids, names): a plain loop finds their end before memchr's call would.
    const char *q = p;
    const char *near = e - p > 24 ? p + 24 : e;
    while (q < near && *q != '"') ++q;
    if (q == near)
      q = near == e ? nullptr : static_cast<const char *>(std::memchr(near, '"', static_cast<std::size_t>(e - near)));
    if (q == nullptr) return nullptr;
    std::size_t slashes = 0;
    for (const char *s = q; s > start && s[-1] == '\\'; --s) ++slashes;
    if (slashes % 2 == 0) return q;
    p = q + 1;
  }
}

const char kReplacement[] = "\xEF\xBF\xBD";

// Length of the well-formed UTF-8 sequence at s[i] (1..4), or 0 when the bytes there are not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  return static_cast<unsigned char>(s[i]) < 0x80 ? 1 : evalgraph::utf8::sequence_length(s, i);
}

// Appends raw bytes, replacing what is not UTF-8.
void append_checked(std::string &out, std::string_view s, bool &bad) {
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t run = i;
    while (run < s.size() && static_cast<unsigned char>(s[run]) < 0x80) ++run;
    out.append(s.data() + i, run - i);
    i = run;
    if (i >= s.size()) break;
    std::size_t n = utf8_length(s, i);
    if (n == 0) {
      out.append(kReplacement);
      bad = true;
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
}

// One escape at raw[i] == '\\'; returns the index after it.
std::size_t decode_escape(std::string_view raw, std::size_t i, std::string &out, bool &bad) {
  if (i + 1 >= raw.size()) {
    bad = true;
    return raw.size();
  }
  const char r = evalgraph::utf8::json_unescape(raw[i + 1]);
  if (r == 0) {
    bad = true;
    out.append(kReplacement);
    return i + 2;
  }
  if (r != 'u') {
    out.push_back(r);
    return i + 2;
  }
  std::uint32_t cp = 0;
  if (!evalgraph::utf8::read_hex4(raw, i + 2, cp)) {
    bad = true;
    out.append(kReplacement);
    return std::min(raw.size(), i + 2);
  }
  std::size_t next = i + 6;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    std::uint32_t lo = 0;
    if (next + 1 < raw.size() && raw[next] == '\\' && raw[next + 1] == 'u' && evalgraph::utf8::read_hex4(raw, next + 2, lo) &&
        lo >= 0xDC00 && lo <= 0xDFFF) {
      evalgraph::utf8::append(out, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
      return next + 6;
    }
    bad = true;
    out.append(kReplacement);
    return next;
  }
  if (cp >= 0xDC00 && cp <= 0xDFFF) {
    bad = true;
    out.append(kReplacement);
    return next;
  }
  evalgraph::utf8::append(out, cp);
  return next;
}

nlohmann::json number_json(std::string_view tok, bool integer_wanted) {
  std::string s(tok);
  if (s == "NaN" || s == "Infinity" || s == "-Infinity") return s;  // proto3 JSON's names for them
  char *end = nullptr;
  if (integer_wanted) {
    errno = 0;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() && *end == '\0' && errno == 0) return v;
  }
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() && *end == '\0' && std::isfinite(d)) return d;
  return nullptr;
}

nlohmann::json any_value_at(Cursor &c, bool &bad, int depth);

// arrayValue {values: [AnyValue]} or kvlistValue {values: [{key, value}]}.
nlohmann::json container_value(Cursor &c, bool kv, bool &bad, int depth) {
  nlohmann::json out = kv ? nlohmann::json::object() : nlohmann::json::array();
  std::string_view k;
  if (!c.begin_object()) return out;
  while (c.next_member(k)) {
    if (k != "values" || !c.begin_array()) {
      c.skip();
      continue;
    }
    while (c.next_element()) {
      if (!kv) {
        out.push_back(any_value_at(c, bad, depth + 1));
        continue;
      }
      std::string key;
      nlohmann::json value;
      std::string_view m;
      if (!c.begin_object()) {
        c.skip();
        continue;
      }
      while (c.next_member(m)) {
        std::string_view raw;
        if (m == "key" && c.raw_string(raw))
          key = unescape(raw, bad);
        else if (m == "value")
          value = any_value_at(c, bad, depth + 1);
        else
          c.skip();
      }
      out[key] = std::move(value);
    }
  }
  return out;
}

nlohmann::json any_value_at(Cursor &c, bool &bad, int depth) {
  if (depth > kMaxValueDepth || c.peek() != '{') {
    if (depth > kMaxValueDepth) bad = true;
    c.skip();
    return nullptr;
  }
  nlohmann::json out;
  std::string_view k;
  c.begin_object();
  while (c.next_member(k)) {
    std::string_view raw;
    if (k == "stringValue" || k == "bytesValue") {
      if (c.raw_string(raw))
        out = unescape(raw, bad);
      else
        c.skip();
    } else if (k == "intValue" || k == "doubleValue") {
      std::string_view tok = c.peek() == '"' && c.raw_string(raw) ? raw : c.skip();
      out = number_json(tok, k == "intValue");
    } else if (k == "boolValue") {
      std::string_view tok = c.skip();
      out = tok == "true";
    } else if (k == "arrayValue" || k == "kvlistValue") {
      out = container_value(c, k == "kvlistValue", bad, depth);
    } else {
      c.skip();
    }
  }
  return out;
}

}  // namespace

void Cursor::ws_run() {
  while (p_ < e_ && is_ws(*p_)) {
    if (*p_ == '\n') ++newlines;
    ++p_;
  }
}

std::size_t Cursor::offset() {
  ws();
  return static_cast<std::size_t>(p_ - b_);
}

bool Cursor::next_member(std::string_view &key) {
  if (failed) return false;
  ws();
  if (p_ < e_ && *p_ == ',') ++p_;  // (lax: the separator is not insisted on)
  ws();
  if (p_ < e_ && *p_ == '}') {
    ++p_;
    return false;
  }
  if (!raw_string(key) || !expect(':')) {
    fail();
    return false;
  }
  return true;
}

bool Cursor::next_element() {
  if (failed) return false;
  ws();
  if (p_ < e_ && *p_ == ',') ++p_;
  ws();
  if (p_ >= e_) {
    fail();
    return false;
  }
  if (*p_ == ']') {
    ++p_;
    return false;
  }
  return true;
}

bool Cursor::raw_string(std::string_view &raw) {
  if (failed || !expect('"')) return false;
  const char *end = string_end(p_, e_);
  if (end == nullptr) {
    fail();
    return false;
  }
  raw = std::string_view(p_, static_cast<std::size_t>(end - p_));
  p_ = end + 1;
  return true;
}

std::string_view Cursor::skip() {
  ws();
  const char *start = p_;
  if (failed || p_ >= e_) {
    fail();
    return {};
  }
  char stack[kMaxSkipDepth];
  int depth = 0;
  do {
    if (p_ >= e_) {
      fail();
      return {};
    }
    const char c = *p_;
    if (c == '"') {
      const char *end = string_end(p_ + 1, e_);
      if (end == nullptr) {
        fail();
        return {};
      }
      p_ = end + 1;
    } else if (c == '{' || c == '[') {
      if (depth == kMaxSkipDepth) {
        fail();
        return {};
      }
      stack[depth++] = c == '{' ? '}' : ']';
      ++p_;
    } else if (c == '}' || c == ']') {
      if (depth == 0 || stack[depth - 1] != c) {
        fail();
        return {};
      }
      --depth;
      ++p_;
    } else if (depth == 0) {  // a number or literal at the top: up to the next delimiter
      while (p_ < e_ && !is_ws(*p_) && *p_ != ',' && *p_ != '}' && *p_ != ']' && *p_ != ':') ++p_;
      if (p_ == start) {
        fail();
        return {};
      }
    } else {
      if (c == '\n') ++newlines;
      ++p_;
    }
  } while (depth > 0);
  return std::string_view(start, static_cast<std::size_t>(p_ - start));
}

bool Cursor::integer(std::int64_t &out) {
  std::string_view raw;
  std::string_view tok = peek() == '"' ? (raw_string(raw) ? raw : std::string_view()) : skip();
  if (tok.empty()) return false;
  std::size_t i = tok[0] == '-' ? 1 : 0;
  if (i == tok.size()) return false;
  std::int64_t v = 0;
  for (; i < tok.size(); ++i) {
    if (tok[i] < '0' || tok[i] > '9') return false;
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (tok[i] - '0');
  }
  out = tok[0] == '-' ? -v : v;
  return true;
}

std::string unescape(std::string_view raw, bool &bad) {
  std::string out;
  out.reserve(raw.size());
  std::size_t i = 0;
  while (i < raw.size()) {
    const auto *slash = static_cast<const char *>(std::memchr(raw.data() + i, '\\', raw.size() - i));
    std::size_t run_end = slash == nullptr ? raw.size() : static_cast<std::size_t>(slash - raw.data());
    append_checked(out, raw.substr(i, run_end - i), bad);
    i = run_end;
    if (i < raw.size()) i = decode_escape(raw, i, out, bad);
  }
  return out;
}

nlohmann::json any_value(std::string_view text, bool &bad) {
  Cursor c(text);
  return any_value_at(c, bad, 0);
}

std::string any_string(std::string_view text, bool &bad) {
  Cursor c(text);
  std::string_view k, raw;
  if (c.begin_object() && c.next_member(k) && k == "stringValue" && c.raw_string(raw)) return unescape(raw, bad);
  nlohmann::json v = any_value(text, bad);
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string normalise_id(std::string_view raw, std::size_t bytes) {
  static const char *kHex = "0123456789abcdef";
  std::string out;
  if (raw.size() == 2 * bytes) {  // hex, the usual form: by a table (a hex digit -> its lower case; others 0)
    static const std::array<char, 256> kLower = [] {
      std::array<char, 256> t{};
      for (int c = 0; c < 256; ++c)
        if (int d = evalgraph::utf8::hex_digit(static_cast<char>(c)); d >= 0) t[static_cast<std::size_t>(c)] = kHex[d];
      return t;
    }();
    out.resize(raw.size());
    char nonzero = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const char l = kLower[static_cast<unsigned char>(raw[i])];
      if (l == 0) return "";
      out[i] = l;
      nonzero |= static_cast<char>(l ^ '0');
    }
    if (nonzero == 0) return "";  // all zero: OTel's invalid id
    return out;
  } else if (raw.size() == 4 * ((bytes + 2) / 3)) {  // base64
    auto val = [](char ch) -> int {
      if (ch >= 'A' && ch <= 'Z') return ch - 'A';
      if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
      if (ch >= '0' && ch <= '9') return ch - '0' + 52;
      if (ch == '+' || ch == '-') return 62;
      if (ch == '/' || ch == '_') return 63;
      return -1;
    };
    std::uint32_t acc = 0;
    int bits = 0;
    for (char ch : raw) {
      if (ch == '=') break;
      int v = val(ch);
      if (v < 0) return "";
      acc = (acc << 6) | static_cast<std::uint32_t>(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        const auto byte = static_cast<unsigned>((acc >> bits) & 0xFF);
        out.push_back(kHex[byte >> 4]);
        out.push_back(kHex[byte & 0xF]);
      }
    }
    if (out.size() != 2 * bytes) return "";
  } else {
    return "";
  }
  if (out.find_first_not_of('0') == std::string::npos) return "";  // all zero: OTel's invalid id
  return out;
}

}  // namespace evalgraph::io::otlp
