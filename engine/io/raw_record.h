#pragma once
// One record as the executor carries it: a JSON object kept as text, field by field.
//
// Dataset fields point into the line they were read from; values added later (node outputs, _replication)
// are owned strings. Nothing is parsed or re-serialised on the way through, so a record costs the engine
// little more than copying its bytes (see util/raw_json.h). Offsets, not pointers: copies stay valid.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/raw_json.h"

namespace evalgraph {

class RawRecord {
 public:
  // Takes the text of one JSON object; false (and the record left empty) if it is not one.
  bool assign(std::string text);
  // Same, with the members already found by rawjson::object_members(text) (spans into text).
  void assign(std::string text, std::vector<rawjson::Member> &members);

  // The raw JSON text of a top-level field, or nullopt when the record has no such field.
  std::optional<std::string_view> get(std::string_view key) const;

  // Sets a field to a JSON value given as text (the caller guarantees it is valid JSON). A new key goes last.
  void set(std::string_view key, std::string value_json);

  // Appends the record as one line of JSON (no newline): its fields in order. Returns the offset in `out`
  // where the fields added after assign() begin (their `"key":value` list runs to the closing brace).
  std::size_t write(std::string &out) const;

  // True while set() has replaced none of the fields that assign() read: the record is then its dataset text
  // plus the added fields, which is all the progress journal needs to store.
  bool dataset_fields_intact() const { return intact_; }

  // The length write() gives (without writing it).
  std::size_t text_bytes() const;

  // `base` (a record as assign() read it) with the members of `added` (a JSON object's text) appended:
  // the text write() gives for the record they came from.
  static std::string combine(const RawRecord &base, std::string_view added);

 private:
  struct Field {
    std::string key;
    std::int32_t owned = -1;  // -1: a span of text_; else an index into owned_
    rawjson::Span span;
  };
  std::string_view value(const Field &f) const;

  std::string text_;
  std::vector<std::string> owned_;
  std::vector<Field> fields_;
  std::size_t base_ = 0;  // fields [0, base_) came from assign()
  bool intact_ = true;
};

// The value of `sub` inside a JSON object given as text, or nullopt (not an object, or no such key).
std::optional<std::string_view> member_of(std::string_view object_json, std::string_view sub);

}  // namespace evalgraph
