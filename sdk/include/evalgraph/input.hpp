// evalgraph plugin SDK — reading a node's input without building a DOM (header-only, C++17).
//
// The host hands a node its input as JSON text: one object of the ports the node reads (an array of such
// objects for a sequence node). evalgraph::Record scans that object once, keeps the members a node names, and
// hands out their strings as views into the text where they hold no escapes; everything else is validated and
// skipped, so the text a Record accepts is exactly the text a JSON parser accepts (RFC 8259, UTF-8 checked,
// \u escapes with paired surrogates, numbers within a double's range, nesting up to kMaxInputDepth; a repeated
// member: the last one counts, as in nlohmann::json). There is no second reader behind it: what it refuses is
// refused, in the words of evalgraph::parse_bounded (json_bounded.hpp), and every refusal names the node and
// the port.
//
//   const evalgraph::NodeSpec kSpec{.name = "my.node", .reads = {"answer"}, .reads_optional = {"retrieved_docs"}, ...};
//   const evalgraph::Port answer_ = kSpec.port("answer"), docs_ = kSpec.port("retrieved_docs");  // node members
//   evalgraph::Record in(input, kSpec);                                 // per record: the spec's ports
//   std::string answer = in.required_text(answer_, "the assistant text");  // a string or null, else an InputError
//   std::vector<evalgraph::Doc> docs = in.docs(docs_, "doc_", 64);         // the shapes our datasets hold
//
// Why not simdjson On-Demand: it is not in the SDK's dependencies (an out-of-tree plugin builds against the
// installed headers and nlohmann/json only), it needs its input padded (a copy of every record, the host's
// buffer is not), and this scanner already is as strict as the engine's own reader (lib/util/raw_json),
// which lives in the engine, not behind the C ABI. Measured: bench/ksodi_throughput.sh, see the commit.
#ifndef EVALGRAPH_INPUT_HPP
#define EVALGRAPH_INPUT_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evalgraph/json_bounded.hpp"
#include "evalgraph/plugin.hpp"
#include "evalgraph/utf8.hpp"

namespace evalgraph {

// A retrieved document or a tool output: what Record::docs() reads.
struct Doc {
  std::string id;
  std::string text;
};

namespace input {

// One member's value: its kind, its JSON text and, for a string, its content.
struct Value {
  enum Kind { Absent, Null, String, Number, Bool, Array, Object };
  Kind kind = Absent;
  std::string_view raw;    // the value's JSON text (for a string: with its quotes)
  std::string_view plain;  // String without escapes: the content, a view into the input
  std::string decoded;     // String with escapes: the decoded content
  bool escaped = false;
  std::string_view str() const { return escaped ? std::string_view(decoded) : plain; }
  bool is_string() const { return kind == String; }
  bool absent_or_null() const { return kind == Absent || kind == Null; }
  // As nlohmann::json::type_name() names it.
  const char *type_name() const {
    static constexpr const char *kNames[] = {"null", "null", "string", "number", "boolean", "array", "object"};
    return kNames[kind];
  }
  // The value as text: absent/null → "", a string → its content, anything else → its JSON as nlohmann::json
  // dumps it (cold: a number or an object where a text was expected).
  std::string text() const {
    if (absent_or_null()) return {};
    if (kind == String) return std::string(str());
    return nlohmann::json::parse(raw).dump();
  }
};

// A validating scanner over JSON text (no DOM). Each method consumes one piece at the current position and
// returns false where the text is not JSON.
class Scanner {
 public:
  explicit Scanner(std::string_view s, int max_depth = kMaxInputDepth) : s_(s), max_depth_(max_depth) {}

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
  int max_depth() const { return max_depth_; }

  // A string: UTF-8 validated (RFC 3629), no raw control characters, escapes decoded (\u with surrogate pairs).
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
        if (const std::uint64_t m = utf8::json_special8(s_.data() + p_); m != 0) {
          // Straight to the first special byte (the lowest flagged byte is always a true hit).
          p_ += static_cast<std::size_t>(__builtin_ctzll(m) >> 3);
          break;
        }
        p_ += 8;
      }
      if (p_ >= s_.size()) break;
      const unsigned char c = static_cast<unsigned char>(s_[p_]);
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
        if (!escape(v, run)) return false;
        continue;
      }
      if (c < 0x80) {
        ++p_;
        continue;
      }
      const std::size_t len = utf8::sequence_length(s_, p_);
      if (len == 0) return false;
      p_ += len;
    }
    return false;
  }

  // Any value, fully validated; records its text and kind. `depth`: the containers around it.
  bool skip(Value &v, int depth = 0) {
    ws();
    if (p_ >= s_.size()) return false;
    const char c = s_[p_];
    if (c == '"') return string(v);
    const std::size_t b = p_;
    if (c == '{' || c == '[') {
      if (depth + 1 > max_depth_) return false;
      Value tmp;
      const bool ok = c == '{' ? object([&](std::string_view) { return skip(tmp, depth + 1); })
                               : array([&] { return skip(tmp, depth + 1); });
      if (!ok) return false;
      v.kind = c == '{' ? Value::Object : Value::Array;
    } else if (literal("null")) {
      v.kind = Value::Null;
    } else if (literal("true") || literal("false")) {
      v.kind = Value::Bool;
    } else if (number()) {
      v.kind = Value::Number;
    } else {
      return false;
    }
    v.raw = s_.substr(b, p_ - b);
    return true;
  }

  // The elements of an array at the current position: f() consumes one value.
  template <class F> bool array(F &&f) {
    if (!eat('[')) return false;
    if (eat(']')) return true;
    do {
      if (!f()) return false;
    } while (eat(','));
    return eat(']');
  }

  // The members of an object at the current position: f(key) consumes the value. A key with escapes is
  // handed over decoded (in a buffer that lives until the next key).
  template <class F> bool object(F &&f) {
    if (!eat('{')) return false;
    if (eat('}')) return true;
    Value key;
    do {
      if (!string(key) || !eat(':')) return false;
      if (!f(key.str())) return false;
    } while (eat(','));
    return eat('}');
  }

 private:
  bool hex4(std::size_t i, std::uint32_t &cp) const { return utf8::read_hex4(s_, i, cp); }

  // The escape at p_ (a backslash) into v.decoded; `run` is where the not yet copied text starts.
  bool escape(Value &v, std::size_t &run) {
    if (p_ + 1 >= s_.size()) return false;
    const char r = utf8::json_unescape(s_[p_ + 1]);
    if (r == 0) return false;
    if (!v.escaped) {
      v.escaped = true;
      v.decoded.reserve(64);
    }
    v.decoded.append(s_.substr(run, p_ - run));
    if (r == 'u') {  // Python's json.dumps writes all non-ASCII text so (ensure_ascii)
      std::uint32_t cp = 0;
      if (!hex4(p_ + 2, cp) || (cp >= 0xDC00 && cp <= 0xDFFF)) return false;  // a lone low surrogate
      p_ += 6;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        std::uint32_t lo = 0;
        if (p_ + 1 >= s_.size() || s_[p_] != '\\' || s_[p_ + 1] != 'u' || !hex4(p_ + 2, lo) || lo < 0xDC00 || lo > 0xDFFF)
          return false;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        p_ += 6;
      }
      utf8::append(v.decoded, cp);
    } else {
      v.decoded.push_back(r);
      p_ += 2;
    }
    run = p_;
    return true;
  }

  bool literal(std::string_view w) {
    if (s_.substr(p_, w.size()) != w) return false;
    p_ += w.size();
    return true;
  }
  // A number as RFC 8259 spells it, within a double's range: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
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
    if (exp || p_ - start > 300) return std::isfinite(std::strtod(std::string(s_.substr(start, p_ - start)).c_str(), nullptr));
    return true;
  }

  std::string_view s_;
  std::size_t p_ = 0;
  int max_depth_;
};

// Why `text` is not JSON nested at most `max_depth` deep, in parse_bounded's words ("not valid JSON at byte
// 12, near 'tru'", "nested deeper than 64 levels", "a number beyond the range of a double (…)"). Only called
// once the scanner has refused the text: it words the refusal, its result is not used.
inline std::string why_refused(std::string_view text, int max_depth) {
  nlohmann::json ignored;
  std::string why;
  if (evalgraph::parse_bounded(text, ignored, max_depth, &why)) return "not valid JSON";
  return why;
}

// Docs in the accepted shapes, from the array at the scanner's position; `depth`: the containers around it.
// False where the text is not JSON (or nests deeper than the scanner allows).
inline bool read_doc_array(Scanner &r, const std::string &field, const char *id_prefix, std::vector<Doc> &out, int depth) {
  if (depth + 1 > r.max_depth()) return false;
  static constexpr const char *kText[] = {"text", "content", "page_content", "output", "result"};
  static constexpr const char *kId[] = {"id", "doc_id", "name", "tool", "source"};
  std::size_t i = 0;
  Value tmp;
  return r.array([&] {
    ++i;
    Doc d;
    d.id = std::string(id_prefix) + std::to_string(i);
    Value e;
    if (r.peek('{')) {
      Value text[5], id[5];
      const bool ok = depth + 2 <= r.max_depth() && r.object([&](std::string_view key) {
        for (int k = 0; k < 5; ++k) {
          if (key == kText[k]) return r.skip(text[k], depth + 2);  // a repeated member: the last counts
          if (key == kId[k]) return r.skip(id[k], depth + 2);
        }
        return r.skip(tmp, depth + 2);
      });
      if (!ok) return false;
      const Value *t = nullptr;
      for (const Value &c : text)
        if (!c.absent_or_null()) {
          t = &c;
          break;
        }
      if (t == nullptr)
        throw std::invalid_argument(field + "[" + std::to_string(i - 1) +
                                    "]: object has no \"text\" (or content/page_content/output/result) member");
      d.text = t->text();
      for (const Value &c : id)
        if (!c.absent_or_null()) {
          d.id = c.text();
          break;
        }
    } else {
      if (!r.skip(e, depth + 1)) return false;
      if (e.kind != Value::String)
        throw std::invalid_argument(field + "[" + std::to_string(i - 1) + "]: expected an object or a string, got " +
                                    e.type_name());
      d.text = std::string(e.str());
    }
    out.push_back(std::move(d));
    return true;
  });
}

}  // namespace input

// The members of a node's input object that the node reads, found in one pass over the text. The text must
// outlive the Record (strings without escapes are views into it).
class Record {
 public:
  // Reads `text` (one JSON object) and keeps the members that are the ports of `spec` (reads, then
  // reads_optional: index i is the Port spec.port(name) resolved). `spec` must outlive the Record (a node type's
  // spec is a constant of the plugin). Not an object, or not JSON: an InputError "<node>: the input is …".
  Record(std::string_view text, const NodeSpec &spec)
      : node_(spec.name), first_(&spec.reads), second_(&spec.reads_optional),
        values_(spec.reads.size() + spec.reads_optional.size()) {
    scan(text);
  }
  // The same with the node's name and the ports named here, in that order (index i is ports[i]).
  Record(std::string_view text, const char *node, std::initializer_list<const char *> ports)
      : node_(node), own_(ports), values_(ports.size()) {
    scan(text);
  }

  const char *node() const { return node_; }
  const char *port(std::size_t i) const {
    if (first_ == nullptr) return own_[i];
    return i < first_->size() ? (*first_)[i] : (*second_)[i - first_->size()];
  }
  const input::Value &operator[](std::size_t i) const { return values_[i]; }

  // The port as text: absent/null → "", a string → its content, anything else → its JSON.
  std::string text(std::size_t i) const { return values_[i].text(); }

  // A port that must be a string (or null, read as ""); else an InputError
  // "<node>: port '<port>' must be a string (<what>)".
  std::string required_text(std::size_t i, const char *what) const {
    const input::Value &v = values_[i];
    if (v.kind != input::Value::String && v.kind != input::Value::Null)
      throw InputError(std::string(node_) + ": port '" + port(i) + "' must be a string (" + what + ")");
    return v.text();
  }

  // A port that must be a number or null/absent (nullopt); else an InputError "<node>: port '<port>' must be
  // <what>".
  std::optional<double> number(std::size_t i, const char *what) const {
    const input::Value &v = values_[i];
    if (v.absent_or_null()) return std::nullopt;
    if (v.kind != input::Value::Number) throw InputError(std::string(node_) + ": port '" + port(i) + "' must be " + what);
    return std::strtod(std::string(v.raw).c_str(), nullptr);
  }

  // The port's value as a nlohmann::json (cold: a pass-through value such as an id or a turn number that goes
  // into a DOM-built output); absent → null.
  nlohmann::json json(std::size_t i) const {
    const input::Value &v = values_[i];
    if (v.absent_or_null()) return nullptr;
    if (v.kind == input::Value::String) return std::string(v.str());
    return nlohmann::json::parse(v.raw);
  }

  // Retrieved docs / tool outputs in any of the shapes our datasets hold:
  //   [{"id": "...", "text": "..."}, …]   (text may also be under content/page_content/output/result, the id
  //                                       under doc_id/name/tool/source; a non-string one is its JSON)
  //   ["text", "text", …]                 (ids become <id_prefix>1, <id_prefix>2, …)
  //   "[…]"                               a string holding one of the above as JSON (CSV datasets), nested at
  //                                       most `max_depth` deep (the pipeline's limits.nesting_depth)
  //   null / "" / absent                  no docs
  // Anything else: an InputError "<node>: <port>…" that says what was expected and what came.
  std::vector<Doc> docs(std::size_t i, const char *id_prefix, int max_depth = kDefaultNestingDepth) const {
    try {
      return read_docs(values_[i], port(i), id_prefix, max_depth);
    } catch (const std::invalid_argument &e) {
      throw InputError(std::string(node_) + ": " + e.what());
    }
  }

  // The same, with std::invalid_argument "<field>…" (no node named): for callers with a value of their own.
  static std::vector<Doc> read_docs(const input::Value &v, const std::string &field, const char *id_prefix,
                                    int max_depth = kDefaultNestingDepth) {
    std::vector<Doc> out;
    if (v.absent_or_null()) return out;
    if (v.kind == input::Value::String) {
      const std::string_view s = v.str();
      const std::size_t b = s.find_first_not_of(" \t\r\n");
      if (b == std::string_view::npos) return out;
      if (s[b] != '[')
        throw std::invalid_argument(field + ": expected an array of {\"id\",\"text\"} objects or of strings "
                                            "(or a string holding such a JSON array), got a plain string");
      auto refuse = [&] {
        return std::invalid_argument(field + ": the string looks like a JSON array but is " +
                                     input::why_refused(s, max_depth) +
                                     " (limits.nesting_depth = " + std::to_string(max_depth) + ")");
      };
      input::Scanner r(s, max_depth);
      bool ok = false;
      try {
        ok = input::read_doc_array(r, field, id_prefix, out, 0) && r.at_end();
      } catch (const std::invalid_argument &) {  // a doc of the wrong shape; but first: is the whole text JSON?
        input::Scanner whole(s, max_depth);
        input::Value ignored;
        if (!whole.skip(ignored) || !whole.at_end()) throw refuse();
        throw;
      }
      if (!ok) throw refuse();
      return out;
    }
    if (v.kind != input::Value::Array)
      throw std::invalid_argument(field + ": expected an array of {\"id\",\"text\"} objects or of strings, got " +
                                  v.type_name());
    input::Scanner r(v.raw);
    if (!input::read_doc_array(r, field, id_prefix, out, 1)) throw std::logic_error("docs: a validated array did not scan");
    return out;
  }

 private:
  // One pass over the object: each member that is a port is kept at its index, the rest validated and skipped.
  void scan(std::string_view text) {
    input::Scanner r(text);
    input::Value skipped;
    auto keep = [&](std::string_view key, const std::vector<const char *> &ports, std::size_t base, bool &found) {
      for (std::size_t i = 0; i < ports.size(); ++i)
        if (key == ports[i]) {
          found = true;
          values_[base + i] = input::Value{};  // a repeated member: the last one counts
          return r.skip(values_[base + i], 1);
        }
      return true;
    };
    const bool ok = r.peek('{') && r.object([&](std::string_view key) {
      bool found = false;
      const bool fine = first_ == nullptr ? keep(key, own_, 0, found)
                                          : keep(key, *first_, 0, found) &&
                                                (found || keep(key, *second_, first_->size(), found));
      return found ? fine : r.skip(skipped, 1);
    }) && r.at_end();
    if (!ok) {
      input::Scanner whole(text);
      if (whole.skip(skipped) && whole.at_end())
        throw InputError(std::string(node_) + ": the input is not an object but " + skipped.type_name());
      throw InputError(std::string(node_) + ": the input is " + input::why_refused(text, kMaxInputDepth));
    }
  }

  const char *node_;
  const std::vector<const char *> *first_ = nullptr, *second_ = nullptr;  // the spec's ports (null: own_)
  std::vector<const char *> own_;                                        // ports named at construction
  std::vector<input::Value> values_;
};

// A node's input as the host sends it: one object, or (a sequence node's group) an array of objects. Calls
// f(object_text) for the object, or for each element, and returns f's output, or the outputs of the elements
// as one JSON array. Text that is not JSON: an InputError "<node>: the input is …".
template <class F> std::string for_each_record(std::string_view input, const char *node, F &&f) {
  input::Scanner r(input);
  if (!r.peek('[')) return f(input);
  std::string out = "[";
  input::Value e;
  const bool ok = r.array([&] {
    if (!r.skip(e, 1)) return false;
    if (out.size() > 1) out.push_back(',');
    out += f(e.raw);
    return true;
  }) && r.at_end();
  if (!ok) throw InputError(std::string(node) + ": the input is " + input::why_refused(input, kMaxInputDepth));
  out.push_back(']');
  return out;
}

// The records of a sequence node's input: the elements of an array (a group; *group = true), or the one object
// the host sends outside a group. Views into `input`. Text that is not JSON: an InputError naming the node.
inline std::vector<std::string_view> sequence_records(std::string_view input, const char *node, bool *group) {
  std::vector<std::string_view> out;
  input::Scanner r(input);
  *group = r.peek('[');
  if (!*group) {
    out.push_back(input);
    return out;
  }
  input::Value e;
  const bool ok = r.array([&] {
    if (!r.skip(e, 1)) return false;
    out.push_back(e.raw);
    return true;
  }) && r.at_end();
  if (!ok) throw InputError(std::string(node) + ": the input is " + input::why_refused(input, kMaxInputDepth));
  return out;
}

// A sequence node's records (sequence_records), each read as a Record with the same ports.
inline std::vector<Record> read_sequence(std::string_view input, const char *node, std::initializer_list<const char *> ports,
                                         bool *group) {
  std::vector<Record> out;
  for (std::string_view text : sequence_records(input, node, group)) out.emplace_back(text, node, ports);
  return out;
}

// The same for a node type's spec (its ports, reads then reads_optional; see Record(text, spec)).
inline std::vector<Record> read_sequence(std::string_view input, const NodeSpec &spec, bool *group) {
  std::vector<Record> out;
  for (std::string_view text : sequence_records(input, spec.name, group)) out.emplace_back(text, spec);
  return out;
}

// A judge or an index that compares a text with its transformed version: what the chatbot judges and indices
// share is reading the two string ports "original" and "transformed" (a Record, no DOM; null or another type is
// an InputError naming the port), one computation on the two texts, and an output built as JSON. Derive, give
// the node's name (its spec's), override compare(); declare the node type with text_pair_type<T>(spec).
class TextPairNode : public RawNode {
 public:
  explicit TextPairNode(const char *node) : node_(node) {}
  virtual nlohmann::json compare(Call &call, const std::string &original, const std::string &transformed) = 0;

  std::string process_raw(Call &call, std::string_view input) final {
    return for_each_record(input, node_, [&](std::string_view text) {
      Record in(text, node_, {"original", "transformed"});
      for (std::size_t i = 0; i < 2; ++i)
        if (!in[i].is_string())
          throw InputError(std::string(node_) + ": port '" + in.port(i) + "' must be a string, not " + in[i].type_name());
      return compare(call, std::string(in[0].str()), std::string(in[1].str()))
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    });
  }

 private:
  const char *node_;
};

// The node type of a TextPairNode T: `spec` (its kind, name, writes, …) with the ports "original" and "transformed".
template <class T> eg_node_type text_pair_type(NodeSpec spec) {
  spec.reads = {"original", "transformed"};
  spec.reads_optional = {};
  return node_type<T>(spec);
}

}  // namespace evalgraph

#endif  // EVALGRAPH_INPUT_HPP
