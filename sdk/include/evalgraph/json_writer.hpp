// evalgraph plugin SDK — the output builder: writes a node's output JSON text directly, no DOM (header-only).
//
// A node that returns a nlohmann::json has it dumped by the SDK (Node); a RawNode that writes its output itself
// uses this builder, and its text is the text the SDK would have dumped for the same values, by construction:
//  - objects: members are written in sorted order (nlohmann's objects are std::maps, so that is the order the
//    SDK's dump gives); key() checks it and throws std::logic_error naming the key, so an edit cannot silently
//    change the output;
//  - strings: escaped as dump(-1, ' ', false, replace) escapes them (\" \\ \b \f \n \r \t, other control
//    characters as \u00xx, everything else as is); a string that is not valid UTF-8 goes through nlohmann;
//  - doubles: the shortest text that reads back as the same double, by the SDK's JSON library's own formatter
//    (nlohmann::detail::to_chars, the one its serializer calls), non-finite as null; integers in decimal.
// Why not build a DOM and dump it: a std::map per object and a std::string per key and value cost more than
// the KSODI operators' own work (bench/ksodi_throughput.sh).
//
//   std::string text;
//   evalgraph::JsonWriter w(text);
//   w.begin_object();
//   w.member("n", 3);
//   w.key("xs"); w.begin_array(); w.number(0.5); w.end_array();
//   w.end_object();  // text == {"n":3,"xs":[0.5]}
#ifndef EVALGRAPH_JSON_WRITER_HPP
#define EVALGRAPH_JSON_WRITER_HPP


#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "evalgraph/utf8.hpp"

namespace evalgraph {

// A string member that is null where the string is empty (JsonWriter writes an empty optional as null).
inline std::optional<std::string_view> or_null(const std::string &s) {
  return s.empty() ? std::nullopt : std::optional<std::string_view>(s);
}

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
  // Several members: name, value, name, value, … (names in sorted order, as for member()).
  void members() {}
  template <class V, class... Rest> void members(std::string_view k, const V &v, const Rest &...rest) {
    member(k, v);
    members(rest...);
  }
  // An object of the members given as for members().
  template <class... Members> void object(const Members &...m) {
    begin_object();
    members(m...);
    end_object();
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
  // An optional value, or null where it has none.
  template <class T> void put(const std::optional<T> &v) {
    if (v) put(*v);
    else null();
  }
  // A vector as an array of its values; a std::map (already in sorted order) as an object.
  template <class T> void put(const std::vector<T> &v) {
    begin_array();
    for (const auto &x : v) put(x);
    end_array();
  }
  template <class T> void put(const std::map<std::string, T> &m) {
    begin_object();
    for (const auto &[k, x] : m) member(k, x);
    end_object();
  }

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

  void string_body(std::string_view s) {
    const std::size_t mark = out_.size();
    out_.push_back('"');
    std::size_t run = 0, i = 0;
    const std::size_t n = s.size();
    while (i < n) {
      if (i + 8 <= n && utf8::json_special8(s.data() + i) == 0) {
        i += 8;
        continue;
      }
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (c >= 0x80) {
        std::size_t len = utf8::sequence_length(s, i);
        if (len == 0) {  // not valid UTF-8: nlohmann's replacement rules decide
          replaced_ = true;
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
      utf8::append_json_escape(out_, c);
      ++i;
    }
    out_.append(s.substr(run));
    out_.push_back('"');
  }

  std::string &out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
  bool replaced_ = false;  // a string was not valid UTF-8 (written with nlohmann's replacements)

  friend std::string dump_json(const nlohmann::json &j);
};

// j.dump(), the same text, faster: strings are scanned eight bytes at a time by JsonWriter (nlohmann's
// serializer decodes every byte), numbers and anything else are dumped by nlohmann itself. Where a string is
// not valid UTF-8 the text is j.dump()'s own, which throws nlohmann's type_error 316 as it always did.
// (The SDK sends each chat request through it: bench/estimate_bench.sh.)
inline std::string dump_json(const nlohmann::json &j) {
  std::string out;
  JsonWriter w(out);
  struct Walk {
    JsonWriter &w;
    void operator()(const nlohmann::json &v) {
      switch (v.type()) {
        case nlohmann::json::value_t::object:
          w.begin_object();
          for (auto it = v.begin(); it != v.end(); ++it) {
            w.key(it.key());  // (a std::map: in sorted order, keys outlive the walk)
            (*this)(it.value());
          }
          w.end_object();
          break;
        case nlohmann::json::value_t::array:
          w.begin_array();
          for (const auto &x : v) (*this)(x);
          w.end_array();
          break;
        case nlohmann::json::value_t::string: w.string(v.get_ref<const std::string &>()); break;
        case nlohmann::json::value_t::boolean: w.boolean(v.get<bool>()); break;
        case nlohmann::json::value_t::null: w.null(); break;
        default:  // numbers (nlohmann's own formatting), binary, discarded
          w.value_prefix();
          w.out_.append(v.dump());
      }
    }
  };
  Walk{w}(j);
  return w.replaced_ ? j.dump() : out;
}

}  // namespace evalgraph

#endif  // EVALGRAPH_JSON_WRITER_HPP
