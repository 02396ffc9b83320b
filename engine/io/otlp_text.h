#pragma once
// Internal to the trace reader: a record's JSON text written directly, without building a DOM and dumping it,
// byte for byte as nlohmann's dump(-1, ' ', false, replace) writes it: no spaces, UTF-8 kept as it is, control
// characters escaped, bytes that are not UTF-8 replaced by U+FFFD. Values the mapping holds as nlohmann::json
// (tool calls, documents, resource attributes) are written by nlohmann's own serializer into the same text.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace evalgraph::io::otlp {

class JsonText {
 public:
  explicit JsonText(std::string &out);
  ~JsonText();
  JsonText(const JsonText &) = delete;
  JsonText &operator=(const JsonText &) = delete;

  // Containers: open('{') ... close('}'), open('[') ... close(']'); members: key(k) then one value.
  void open(char bracket) {
    comma();
    out_ += bracket;
    first_ = true;
  }
  void close(char bracket) {
    out_ += bracket;
    first_ = false;
  }
  JsonText &key(std::string_view k) {
    comma();
    escaped(k);
    out_ += ':';
    first_ = true;
    return *this;
  }
  void string(std::string_view s) {
    comma();
    escaped(s);
  }
  void value(const nlohmann::json &v);
  void unsigned_number(std::uint64_t n);

 private:
  void comma() {
    if (!first_) out_ += ',';
    first_ = false;
  }
  void escaped(std::string_view s);    // a string with its quotes
  void dump(const nlohmann::json &v);  // by nlohmann's serializer
  template <class Int>
  void integer(Int n);

  std::string &out_;
  bool first_ = true;
  struct Serializer;
  std::unique_ptr<Serializer> serializer_;  // made on first use
};

}  // namespace evalgraph::io::otlp
