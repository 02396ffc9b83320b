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
// The text is scanned by json_scan.hpp, the one scanner the engine's own reader (lib/util/raw_json) runs on
// too. Why not simdjson On-Demand: it is not in the SDK's dependencies (an out-of-tree plugin builds against
// the installed headers and nlohmann/json only), and it needs its input padded (a copy of every record, the
// host's buffer is not). Measured: bench/ksodi_throughput.sh, see the commit.
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
#include "evalgraph/json_scan.hpp"
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

// The kind of value the scanner met.
inline Value::Kind kind_of(json_scan::Kind k) {
  switch (k) {
    case json_scan::Kind::string:
      return Value::String;
    case json_scan::Kind::number:
      return Value::Number;
    case json_scan::Kind::null:
      return Value::Null;
    default:
      return Value::Bool;
  }
}

// v as the scalar `raw` (its JSON text) the scanner met; a string's content stays a view into the text unless
// it holds escapes.
inline void fill(Value &v, json_scan::Kind kind, std::string_view raw, bool escaped) {
  v.kind = kind_of(kind);
  v.raw = raw;
  if (v.kind != Value::String) return;
  v.escaped = escaped;
  v.decoded.clear();
  if (escaped)
    json_scan::unescape(raw.substr(1, raw.size() - 2), v.decoded);
  else
    v.plain = raw.substr(1, raw.size() - 2);
}

// The handler every reader below builds on (json_scan.hpp): JSON nested at most `max_depth` deep, counting
// `base` containers around the text, with numbers within a double's range (what parse_bounded takes). `top`:
// the kind of the top-level value.
class Bounded : public json_scan::Handler {
 public:
  Bounded(std::string_view text, int max_depth, int base = 0) : text_(text), max_depth_(max_depth), base_(base) {}
  Value::Kind top = Value::Absent;

  bool begin(bool object, std::size_t, std::size_t depth) {
    if (depth == 0) top = object ? Value::Object : Value::Array;
    return static_cast<int>(depth) + base_ < max_depth_;
  }
  bool scalar(json_scan::Kind kind, std::size_t off, std::size_t len, bool, std::size_t depth) {
    if (depth == 0) top = kind_of(kind);
    return kind != json_scan::Kind::number || json_scan::within_double_range(text_.substr(off, len));
  }

 protected:
  // A key's content (decoded when it holds escapes, in a buffer that lives until the next key).
  std::string_view key_text(std::size_t off, std::size_t len, bool escaped) {
    const std::string_view k = text_.substr(off + 1, len - 2);
    if (!escaped) return k;
    key_.clear();
    json_scan::unescape(k, key_);
    return key_;
  }

  std::string_view text_;
  int max_depth_, base_;
  std::string key_;
};

// The value that comes next at one depth, kept in *target (chosen by its key): a scalar at once, a container
// from its beginning to its end.
struct Keep {
  Value *target = nullptr;
  std::size_t start = 0;
  void begin(bool object, std::size_t off) {
    if (target == nullptr) return;
    target->kind = object ? Value::Object : Value::Array;
    start = off;
  }
  void end(std::string_view text, std::size_t off) {
    if (target == nullptr) return;
    target->raw = text.substr(start, off + 1 - start);
    target = nullptr;
  }
  void scalar(std::string_view text, json_scan::Kind kind, std::size_t off, std::size_t len, bool escaped) {
    if (target == nullptr) return;
    fill(*target, kind, text.substr(off, len), escaped);
    target = nullptr;
  }
};

// Reads an object's members: match(key) answers where a member is kept (nullptr: validated and skipped; a
// repeated member: the last one counts). Stops at a top-level value that is not an object.
template <class Match>
class MemberReader : public Bounded {
 public:
  MemberReader(std::string_view text, Match &match) : Bounded(text, kMaxInputDepth), match_(match) {}

  bool begin(bool object, std::size_t off, std::size_t depth) {
    if (!Bounded::begin(object, off, depth)) return false;
    if (depth == 1) keep_.begin(object, off);
    return depth != 0 || object;
  }
  bool end(bool, std::size_t off, std::size_t depth) {
    if (depth == 1) keep_.end(text_, off);
    return true;
  }
  bool key(std::size_t off, std::size_t len, bool escaped, std::size_t depth) {
    if (depth != 1) return true;
    keep_.target = match_(key_text(off, len, escaped));
    if (keep_.target != nullptr) *keep_.target = Value{};
    return true;
  }
  bool scalar(json_scan::Kind kind, std::size_t off, std::size_t len, bool escaped, std::size_t depth) {
    if (!Bounded::scalar(kind, off, len, escaped, depth) || depth == 0) return false;
    if (depth == 1) keep_.scalar(text_, kind, off, len, escaped);
    return true;
  }

 private:
  Match &match_;
  Keep keep_;
};

// Calls f(raw) for each element of the top-level array, in order, as soon as it has been scanned.
template <class F>
class ElementReader : public Bounded {
 public:
  ElementReader(std::string_view text, F &f) : Bounded(text, kMaxInputDepth), f_(f) {}

  bool begin(bool object, std::size_t off, std::size_t depth) {
    if (depth == 1) start_ = off;
    return Bounded::begin(object, off, depth);
  }
  bool end(bool, std::size_t off, std::size_t depth) {
    if (depth == 1) f_(text_.substr(start_, off + 1 - start_));
    return true;
  }
  bool scalar(json_scan::Kind kind, std::size_t off, std::size_t len, bool escaped, std::size_t depth) {
    if (!Bounded::scalar(kind, off, len, escaped, depth)) return false;
    if (depth == 1) f_(text_.substr(off, len));
    return true;
  }

 private:
  F &f_;
  std::size_t start_ = 0;
};

// The first character of `text` after whitespace ('\0' when none).
inline char first_char(std::string_view text) {
  const std::size_t b = text.find_first_not_of(" \t\n\r");
  return b == std::string_view::npos ? '\0' : text[b];
}

// Why `text` is not JSON nested at most `max_depth` deep, in parse_bounded's words ("not valid JSON at byte
// 12, near 'tru'", "nested deeper than 64 levels", "a number beyond the range of a double (…)"). Only called
// once the scanner has refused the text: it words the refusal, its result is not used.
inline std::string why_refused(std::string_view text, int max_depth) {
  nlohmann::json ignored;
  std::string why;
  if (evalgraph::parse_bounded(text, ignored, max_depth, &why)) return "not valid JSON";
  return why;
}

// Reads docs in the accepted shapes from a JSON array (the top-level value of the text; `base`: the containers
// around it). Throws std::invalid_argument "<field>[i]: …" for an element of the wrong shape, once the element
// has been scanned.
class DocsReader : public Bounded {
 public:
  DocsReader(std::string_view text, int max_depth, int base, const std::string &field, const char *id_prefix,
             std::vector<Doc> &out)
      : Bounded(text, max_depth, base), field_(field), id_prefix_(id_prefix), out_(out) {}

  bool begin(bool object, std::size_t off, std::size_t depth) {
    if (!Bounded::begin(object, off, depth)) return false;
    if (depth == 1) {
      ++i_;
      for (int k = 0; k < 5; ++k) text_v_[k] = id_v_[k] = Value{};
    } else if (depth == 2) {
      keep_.begin(object, off);
    }
    return true;
  }
  bool end(bool object, std::size_t off, std::size_t depth) {
    if (depth == 2) keep_.end(text_, off);
    if (depth == 1 && !object) throw wrong_shape("array");
    if (depth == 1) doc();
    return true;
  }
  bool key(std::size_t off, std::size_t len, bool escaped, std::size_t depth) {
    if (depth != 2) return true;
    static constexpr const char *kText[] = {"text", "content", "page_content", "output", "result"};
    static constexpr const char *kId[] = {"id", "doc_id", "name", "tool", "source"};
    const std::string_view k = key_text(off, len, escaped);
    keep_.target = nullptr;
    for (int n = 0; n < 5 && keep_.target == nullptr; ++n) {
      if (k == kText[n]) keep_.target = &text_v_[n];  // a repeated member: the last counts
      if (k == kId[n]) keep_.target = &id_v_[n];
    }
    return true;
  }
  bool scalar(json_scan::Kind kind, std::size_t off, std::size_t len, bool escaped, std::size_t depth) {
    if (!Bounded::scalar(kind, off, len, escaped, depth)) return false;
    if (depth == 2) keep_.scalar(text_, kind, off, len, escaped);
    if (depth != 1) return true;
    ++i_;
    Value e;
    fill(e, kind, text_.substr(off, len), escaped);
    if (e.kind != Value::String) throw wrong_shape(e.type_name());
    out_.push_back(Doc{std::string(id_prefix_) + std::to_string(i_), std::string(e.str())});
    return true;
  }

 private:
  std::invalid_argument wrong_shape(const char *got) const {
    return std::invalid_argument(field_ + "[" + std::to_string(i_ - 1) + "]: expected an object or a string, got " +
                                 got);
  }

  // The object element just scanned, as a doc.
  void doc() {
    const Value *t = nullptr;
    for (const Value &c : text_v_)
      if (!c.absent_or_null()) {
        t = &c;
        break;
      }
    if (t == nullptr)
      throw std::invalid_argument(field_ + "[" + std::to_string(i_ - 1) +
                                  "]: object has no \"text\" (or content/page_content/output/result) member");
    Doc d{std::string(id_prefix_) + std::to_string(i_), t->text()};
    for (const Value &c : id_v_)
      if (!c.absent_or_null()) {
        d.id = c.text();
        break;
      }
    out_.push_back(std::move(d));
  }

  const std::string &field_;
  const char *id_prefix_;
  std::vector<Doc> &out_;
  std::size_t i_ = 0;
  Value text_v_[5], id_v_[5];
  Keep keep_;
};

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
      input::DocsReader r(s, max_depth, 0, field, id_prefix, out);
      bool ok = false;
      try {
        ok = json_scan::scan(s, r).ok();
      } catch (const std::invalid_argument &) {  // a doc of the wrong shape; but first: is the whole text JSON?
        input::Bounded whole(s, max_depth);
        if (!json_scan::scan(s, whole).ok()) throw refuse();
        throw;
      }
      if (!ok) throw refuse();
      return out;
    }
    if (v.kind != input::Value::Array)
      throw std::invalid_argument(field + ": expected an array of {\"id\",\"text\"} objects or of strings, got " +
                                  v.type_name());
    input::DocsReader r(v.raw, kMaxInputDepth, 1, field, id_prefix, out);
    if (!json_scan::scan(v.raw, r).ok()) throw std::logic_error("docs: a validated array did not scan");
    return out;
  }

 private:
  // One pass over the object: each member that is a port is kept at its index, the rest validated and skipped.
  void scan(std::string_view text) {
    auto match = [&](std::string_view key) -> input::Value * {
      if (first_ == nullptr) return find(key, own_, 0);
      input::Value *v = find(key, *first_, 0);
      return v != nullptr ? v : find(key, *second_, first_->size());
    };
    input::MemberReader<decltype(match)> reader(text, match);
    if (json_scan::scan(text, reader).ok()) return;
    input::Bounded whole(text, kMaxInputDepth);
    if (json_scan::scan(text, whole).ok()) {
      input::Value v;
      v.kind = whole.top;
      throw InputError(std::string(node_) + ": the input is not an object but " + v.type_name());
    }
    throw InputError(std::string(node_) + ": the input is " + input::why_refused(text, kMaxInputDepth));
  }

  // The value of the port named `key` among `ports` (index base + i), nullptr when none is.
  input::Value *find(std::string_view key, const std::vector<const char *> &ports, std::size_t base) {
    for (std::size_t i = 0; i < ports.size(); ++i)
      if (key == ports[i]) return &values_[base + i];
    return nullptr;
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
  if (input::first_char(input) != '[') return f(input);
  std::string out = "[";
  auto each = [&](std::string_view element) {
    if (out.size() > 1) out.push_back(',');
    out += f(element);
  };
  input::ElementReader<decltype(each)> reader(input, each);
  if (!json_scan::scan(input, reader).ok())
    throw InputError(std::string(node) + ": the input is " + input::why_refused(input, kMaxInputDepth));
  out.push_back(']');
  return out;
}

// The records of a sequence node's input: the elements of an array (a group; *group = true), or the one object
// the host sends outside a group. Views into `input`. Text that is not JSON: an InputError naming the node.
inline std::vector<std::string_view> sequence_records(std::string_view input, const char *node, bool *group) {
  std::vector<std::string_view> out;
  *group = input::first_char(input) == '[';
  if (!*group) {
    out.push_back(input);
    return out;
  }
  auto each = [&](std::string_view element) { out.push_back(element); };
  input::ElementReader<decltype(each)> reader(input, each);
  if (!json_scan::scan(input, reader).ok())
    throw InputError(std::string(node) + ": the input is " + input::why_refused(input, kMaxInputDepth));
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
