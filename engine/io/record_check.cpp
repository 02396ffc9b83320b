#include "io/record_check.h"

#include <algorithm>
#include <unordered_set>

namespace evalgraph::io::detail {

using rawjson::Fault;

rawjson::CheckOptions check_options(const RecordLimits &limits) {
  rawjson::CheckOptions o;
  o.max_depth = std::clamp(limits.nesting_depth, 1, rawjson::kMaxDepth);
  o.max_items = limits.array_items;
  o.unique_keys = true;
  return o;
}

void refuse_utf16(ByteSource &src) {
  if (src.end - src.pos < 2) return;
  const auto *b = reinterpret_cast<const unsigned char *>(src.data() + src.pos);
  if ((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF))
    throw DataError(src.path(), 1, "the file is UTF-16 (it starts with a UTF-16 byte order mark), not UTF-8",
                    "convert it, e.g. iconv -f UTF-16 -t UTF-8 in > out (Excel: save as \"CSV UTF-8\")");
}

std::string thousands(std::size_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string size_words(std::size_t bytes) {
  constexpr std::size_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  if (bytes >= kGiB && bytes % kGiB == 0) return " (" + std::to_string(bytes / kGiB) + " GiB)";
  if (bytes >= kMiB && bytes % kMiB == 0) return " (" + std::to_string(bytes / kMiB) + " MiB)";
  if (bytes >= kKiB && bytes % kKiB == 0) return " (" + std::to_string(bytes / kKiB) + " KiB)";
  return "";
}

std::string record_too_long(std::size_t length, std::size_t limit) {
  return "the record is " + thousands(length) + " bytes, over the limit limits.record_bytes = " + thousands(limit) +
         size_words(limit);
}
std::string record_too_long_hint() {
  return "split or shorten the record, or raise limits.record_bytes in the pipeline";
}

std::string field_too_long(std::string_view field, std::size_t length, std::size_t limit) {
  return "field '" + std::string(field) + "' is " + thousands(length) +
         " bytes, over the limit limits.field_bytes = " + thousands(limit) + size_words(limit);
}
std::string field_too_long_hint() { return "shorten the field, or raise limits.field_bytes in the pipeline"; }

std::string syntax_hint(Fault f, const std::string &dflt) {
  switch (f) {
    case Fault::bad_utf8: return "save the data set as UTF-8 (e.g. iconv -f WINDOWS-1252 -t UTF-8 in > out)";
    case Fault::control_char: return "write control characters escaped (\\n, \\t, \\u0000); a file full of NUL bytes is "
                                     "probably UTF-16: convert it with iconv -f UTF-16 -t UTF-8";
    default: return dflt;
  }
}

std::string more(std::size_t n) {
  if (n <= 1) return "";
  return " (and " + std::to_string(n - 1) + " more problem" + (n > 2 ? "s" : "") + " in this record)";
}

namespace {

std::string field_name(const std::vector<rawjson::Member> &members, long index) {
  if (index < 0 || static_cast<std::size_t>(index) >= members.size()) return "";
  return members[static_cast<std::size_t>(index)].key;
}

// Whether the problem lies at a top-level key itself (not inside that member's value).
bool at_top_key(const rawjson::Problem &p, const std::vector<rawjson::Member> &members) {
  return p.member >= 0 && static_cast<std::size_t>(p.member) < members.size() &&
         p.offset < members[static_cast<std::size_t>(p.member)].value.off;
}

RecordFault limit_fault(std::string_view line, const rawjson::Problem &p, const std::vector<rawjson::Member> &members,
                        const RecordLimits &limits) {
  RecordFault f;
  f.offset = p.offset;
  f.column = rawjson::column_of(line, p.offset);
  const std::string field = field_name(members, p.member);
  const std::string in = field.empty() ? "" : "field '" + field + "'";
  switch (p.fault) {
    case Fault::depth:
      f.problem = (in.empty() ? std::string("the record") : in) +
                  " nests objects and arrays deeper than the limit limits.nesting_depth = " +
                  std::to_string(limits.nesting_depth) + " (the record itself is level 1)";
      f.hint = "flatten the value, keep a deep structure as JSON text in a string, or raise limits.nesting_depth "
               "(at most " + std::to_string(rawjson::kMaxDepth) + ")";
      break;
    case Fault::items:
      f.problem = (in.empty() ? std::string("the record") : in) + " holds an array of more than the limit " +
                  "limits.array_items = " + thousands(limits.array_items) + " items";
      f.hint = "shorten the list, or raise limits.array_items in the pipeline";
      break;
    case Fault::members:
      f.problem = (at_top_key(p, members) ? std::string("the record has more fields")
                                          : (in.empty() ? std::string("the value") : in) + " holds an object of more members") +
                  " than the limit limits.array_items = " + thousands(limits.array_items);
      f.hint = "shorten the object, or raise limits.array_items in the pipeline";
      break;
    case Fault::number_range:
      f.problem = p.what + (in.empty() ? "" : " (in " + in + ")");
      f.hint = "correct the value, or write it as a string (\"...\") if it is an identifier; a record that holds "
               "it is not evaluated";
      break;
    case Fault::duplicate_key:
      if (at_top_key(p, members))  // a top-level key
        f.problem = "field '" + field + "' appears twice in the record";
      else
        f.problem = p.what + (in.empty() ? "" : " (in " + in + ")");
      f.hint = "keep one of them: JSON readers disagree on which one counts (RFC 8259, section 4)";
      break;
    default:
      f.problem = p.what;
      break;
  }
  return f;
}

}  // namespace

void collect_faults(std::string_view line, const rawjson::CheckResult &res, const std::vector<rawjson::Member> &members,
                    const RecordLimits &limits, std::vector<RecordFault> &out) {
  out.clear();
  for (const auto &p : res.limits) out.push_back(limit_fault(line, p, members, limits));
  for (const auto &m : members) {
    if (m.value.len <= limits.field_bytes) continue;
    RecordFault f;
    f.offset = m.value.off;
    f.column = rawjson::column_of(line, m.value.off);
    f.problem = field_too_long(m.key, m.value.len, limits.field_bytes);
    f.hint = field_too_long_hint();
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), [](const RecordFault &a, const RecordFault &b) { return a.offset < b.offset; });
  // Faults beyond the first 16 were counted, not kept: the count stays right.
  for (std::size_t k = res.limits.size(); k < res.limit_faults; ++k) out.push_back(RecordFault{});
}

void reduce(std::string_view line, const std::vector<rawjson::Member> &members, const rawjson::CheckResult &res,
            const RecordLimits &limits, std::string &text) {
  std::vector<bool> faulty(members.size(), false);
  for (long i : res.fault_members)
    if (i >= 0 && static_cast<std::size_t>(i) < faulty.size()) faulty[static_cast<std::size_t>(i)] = true;
  std::unordered_set<std::string_view> seen;
  text.clear();
  text.push_back('{');
  for (std::size_t i = 0; i < members.size() && seen.size() < limits.array_items; ++i) {  // (a record of a
    const auto &m = members[i];                                                          // million fields keeps
    if (!seen.insert(m.key).second) continue;  // a repeated key: the first one stays       // array_items of them)
    if (text.size() > 1) text.push_back(',');
    rawjson::append_string(text, m.key);
    text.push_back(':');
    if (faulty[i] || m.value.len > limits.field_bytes) {
      text += "null";
      continue;
    }
    for (char c : line.substr(m.value.off, m.value.len))
      if (c != '\r') text.push_back(c);  // (a CR can only be whitespace between tokens here)
  }
  text.push_back('}');
}

bool check_cell(std::string_view cell, std::string_view where, const RecordLimits &limits, RecordFault &fault,
                bool &limit_fault_found) {
  thread_local rawjson::CheckResult res;
  limit_fault_found = false;
  rawjson::CheckOptions opt = check_options(limits);
  opt.max_depth = std::clamp(limits.nesting_depth - 1, 0, rawjson::kMaxDepth - 1);  // a cell is level 2
  rawjson::check(cell, opt, res, nullptr);
  if (res.error.fault != Fault::none) {
    fault.offset = res.error.offset;
    fault.column = rawjson::column_of(cell, res.error.offset);
    std::string at = rawjson::excerpt(cell, res.error.offset);
    fault.problem = std::string(where) + " is listed in json_columns but its text is not valid JSON: " + res.error.what +
                    " (character " + std::to_string(fault.column) + " of the cell" + (at.empty() ? "" : ", at: " + at) +
                    ")";
    fault.hint = syntax_hint(res.error.fault, "fix the cell or remove the column from json_columns");
    return false;
  }
  if (res.limit_faults == 0) return true;
  limit_fault_found = true;
  const rawjson::Problem &p = res.limits.front();
  std::vector<rawjson::Member> none;
  fault = limit_fault(cell, p, none, limits);
  std::string prefix = std::string(where) + ": ";
  if (p.fault == Fault::depth) {
    fault.problem = std::string(where) + " nests objects and arrays deeper than the limit limits.nesting_depth = " +
                    std::to_string(limits.nesting_depth) + " (the record itself is level 1)";
  } else if (p.fault == Fault::items) {
    fault.problem = std::string(where) + " holds an array of more than the limit limits.array_items = " +
                    thousands(limits.array_items) + " items";
  } else {
    fault.problem = prefix + fault.problem;
  }
  fault.problem += more(res.limit_faults);
  return true;
}

}  // namespace evalgraph::io::detail
