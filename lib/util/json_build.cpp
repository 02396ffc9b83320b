// See json_build.h.
#include "util/json_build.h"

#include <cstring>
#include <vector>

#include <evalgraph/utf8.hpp>

#include "util/raw_json.h"

namespace evalgraph::rawjson {
namespace {

using json = nlohmann::json;

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;  // (valid() checked it is a hex digit)
}

// Builds the value of a text that valid() accepted (so every check is skipped here).
class Builder {
 public:
  explicit Builder(std::string_view t) : p_(t.data()), e_(t.data() + t.size()) {}

  json build() {
    json root;
    std::vector<json *> stack;  // the open containers
    std::string key;
    for (;;) {
      // A value.
      ws();
      json &slot = stack.empty() ? root : place(*stack.back(), key);
      const char c = *p_;
      bool opened = false;
      if (c == '{' || c == '[') {  // an object or an array: empty, or opened for its first member or element
        const bool object = c == '{';
        ++p_;
        slot = object ? json::object() : json::array();
        ws();
        if (*p_ == (object ? '}' : ']')) ++p_;
        else {
          stack.push_back(&slot);
          if (object) member_key(key);
          opened = true;
        }
      } else if (c == '"') {
        std::string s;
        string(s);
        slot = std::move(s);
      } else if (c == 't') {
        slot = true;
        p_ += 4;
      } else if (c == 'f') {
        slot = false;
        p_ += 5;
      } else if (c == 'n') {
        slot = nullptr;
        p_ += 4;
      } else {  // a number: nlohmann's own conversion (integer, unsigned or double as json::parse gives)
        const char *b = p_;
        while (p_ < e_ && (std::strchr("+-.eE", *p_) != nullptr || (*p_ >= '0' && *p_ <= '9')) && *p_ != '\0') ++p_;
        slot = json::parse(b, p_);
      }
      if (opened) continue;
      // After a value: ',' goes on in the open container, '}' or ']' closes it.
      for (;;) {
        ws();
        if (stack.empty()) return root;
        const char d = *p_++;
        if (d == ',') {
          if (stack.back()->is_object()) member_key(key);
          break;
        }
        stack.pop_back();  // '}' or ']'
      }
    }
  }

 private:
  void ws() {
    while (p_ < e_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  static json &place(json &container, const std::string &key) {
    if (container.is_array()) {
      auto &a = container.get_ref<json::array_t &>();
      a.emplace_back();
      return a.back();
    }
    // as nlohmann's parser: a repeated key's later value replaces the earlier one
    return container.get_ref<json::object_t &>()[key];
  }

  // At a member's '"': reads the key and the ':' after it.
  void member_key(std::string &key) {
    ws();
    key.clear();
    string(key);
    ws();
    ++p_;  // ':'
  }

  // At a '"': appends the unescaped string to `out` and steps past its closing quote.
  void string(std::string &out) {
    ++p_;
    for (;;) {
      const char *run = p_;
      while (*p_ != '"' && *p_ != '\\') ++p_;  // (valid() saw the closing quote)
      out.append(run, static_cast<std::size_t>(p_ - run));
      if (*p_ == '"') {
        ++p_;
        return;
      }
      ++p_;  // the backslash
      const char esc = utf8::json_unescape(*p_++);  // (valid() saw a JSON escape)
      if (esc != 'u') {
        out.push_back(esc);
        continue;
      }
      std::uint32_t cp = hex4();
      if (cp >= 0xD800 && cp <= 0xDBFF) {  // valid() saw its low surrogate after it
        p_ += 2;
        const std::uint32_t lo = hex4();
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      }
      utf8::append(out, cp);
    }
  }

  std::uint32_t hex4() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 4) | static_cast<std::uint32_t>(hex(*p_++));
    return v;
  }

  const char *p_, *e_;
};

}  // namespace

json parse(std::string_view text) {
  if (!valid(text)) return json(json::value_t::discarded);
  return Builder(text).build();
}

}  // namespace evalgraph::rawjson
