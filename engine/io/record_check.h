#pragma once
// Internal to engine/io: a record's limits (RecordLimits) and the words for what is wrong with a record.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "io/byte_source.h"
#include "io/dataset.h"
#include "util/raw_json.h"

namespace evalgraph::io::detail {

// One thing that makes a record fail alone: where, what, what to do.
struct RecordFault {
  std::size_t column = 0;  // 1-based, in characters; 0: the record as a whole
  std::string problem, hint;
  std::size_t offset = 0;  // byte offset in the line (to order faults)
};

rawjson::CheckOptions check_options(const RecordLimits &limits);

// Throws DataError when the file starts with a UTF-16 byte order mark (FF FE or FE FF): the readers read UTF-8.
void refuse_utf16(ByteSource &src);

// "20,971,520"
std::string thousands(std::size_t n);
// " (20 MiB)" for round sizes, else ""
std::string size_words(std::size_t bytes);

std::string record_too_long(std::size_t length, std::size_t limit);
std::string record_too_long_hint();
std::string field_too_long(std::string_view field, std::size_t length, std::size_t limit);
std::string field_too_long_hint();
// What to do about a line that is not JSON (by the kind of fault), or `dflt`.
std::string syntax_hint(rawjson::Fault f, const std::string &dflt);
// " (and 3 more problems in this record)" for n > 1.
std::string more(std::size_t n);

// The record's limit faults (from check()) and its fields over limits.field_bytes, in text order.
void collect_faults(std::string_view line, const rawjson::CheckResult &res, const std::vector<rawjson::Member> &members,
                    const RecordLimits &limits, std::vector<RecordFault> &out);

// The record with every field that holds a fault or is over limits.field_bytes set to null, and a repeated
// top-level key dropped after its first appearance: what is handed out for a record that fails alone.
void reduce(std::string_view line, const std::vector<rawjson::Member> &members, const rawjson::CheckResult &res,
            const RecordLimits &limits, std::string &text);

// A value checked as a JSON document on its own (a CSV cell in json_columns): its faults in words.
// `where` names it ("column 'docs'"). Returns false with `fault` set when the text is not JSON (a syntax fault:
// fault.column is the offset's column inside the cell).
bool check_cell(std::string_view cell, std::string_view where, const RecordLimits &limits, RecordFault &fault,
                bool &limit_fault);

}  // namespace evalgraph::io::detail
