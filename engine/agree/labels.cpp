#include "agree/labels.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "io/dataset.h"
#include "run_folder/run_folder.h"
#include "util/raw_json.h"

namespace evalgraph::agree {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxListed = 20;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A value's text for matching: a string's content, a number as a canonical number, anything else its JSON.
std::string canonical(const json &v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  return v.dump();
}

std::optional<double> number_of(const std::string &s) {
  if (s.empty()) return std::nullopt;
  char *end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(d)) return std::nullopt;
  return d;
}

std::string shown_values(const LabelFieldDecl &f) {
  std::vector<std::string> v;
  for (const auto &x : f.values) v.push_back(x.is_string() ? x.get<std::string>() : x.dump());
  return "[" + join_list(v) + "]";
}

}  // namespace

std::string key_text(std::string_view t) {
  if (t.size() >= 2 && t.front() == '"' && t.find('\\') == std::string_view::npos)
    return std::string(t.substr(1, t.size() - 2));  // no escapes: the text between the quotes
  if (!t.empty() && t.front() == '"') {
    json v = json::parse(t, nullptr, false);
    if (v.is_string()) return v.get<std::string>();
  }
  return std::string(t);
}

std::optional<double> code_label(const LabelFieldDecl &f, std::string_view text, std::string &why) {
  why.clear();
  // The common spellings without a JSON parse (a labels file of a million rows is mostly these).
  if (!text.empty()) {
    const char c = text.front();
    if (text == "null") return std::nullopt;
    if (f.type == "binary" && (text == "true" || text == "false")) return text == "true" ? 1.0 : 0.0;
    if (c == '-' || (c >= '0' && c <= '9')) {
      double d = 0;
      auto r = std::from_chars(text.data(), text.data() + text.size(), d);
      const bool number = r.ec == std::errc() && r.ptr == text.data() + text.size() && std::isfinite(d);
      if (number && f.type == "number") return d;
      if (number && f.type != "binary")  // ordinal, category: a declared number
        for (std::size_t i = 0; i < f.values.size(); ++i)
          if (f.values[i].is_number() && f.values[i].get<double>() == d) return static_cast<double>(i);
    } else if (c == '"' && text.size() >= 2 && text.find('\\') == std::string_view::npos && f.type != "number" &&
               f.type != "binary") {
      const std::string_view inner = text.substr(1, text.size() - 2);  // a declared text, unescaped as written
      for (std::size_t i = 0; i < f.values.size(); ++i)
        if (f.values[i].is_string() && f.values[i].get_ref<const std::string &>() == inner) return static_cast<double>(i);
    }
  }
  const json v = json::parse(text, nullptr, false);
  if (v.is_discarded()) {
    why = "is not JSON";
    return std::nullopt;
  }
  if (v.is_null()) return std::nullopt;
  if (v.is_string() && v.get<std::string>().empty()) return std::nullopt;
  const std::string s = canonical(v);
  if (f.type == "binary") {
    if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
    const std::string l = lower(s);
    if (l == "1" || l == "true" || l == "yes") return 1.0;
    if (l == "0" || l == "false" || l == "no") return 0.0;
    why = fmt::format("{} is not binary (write true/false, 1/0 or yes/no)", v.dump());
    return std::nullopt;
  }
  if (f.type == "number") {
    if (v.is_number()) return v.get<double>();
    if (v.is_string())
      if (auto d = number_of(s)) return *d;
    why = fmt::format("{} is not a number", v.dump());
    return std::nullopt;
  }
  if (v.is_object() || v.is_array()) {
    why = fmt::format("{} is not one value", v.dump().substr(0, 60));
    return std::nullopt;
  }
  // ordinal and category: one of the declared values (a CSV cell "3" is the value 3)
  for (std::size_t i = 0; i < f.values.size(); ++i) {
    const std::string want = canonical(f.values[i]);
    if (want == s) return static_cast<double>(i);
    if (f.values[i].is_number())
      if (auto d = number_of(s); d && *d == f.values[i].get<double>()) return static_cast<double>(i);
  }
  why = fmt::format("{} is not one of its values {}", v.dump(), shown_values(f));
  return std::nullopt;
}

json label_value(const LabelFieldDecl &f, double code) {
  if (f.type == "binary") return code != 0;
  if (f.type == "number") return code;
  auto i = static_cast<std::size_t>(code);
  return i < f.values.size() ? f.values[i] : json(nullptr);
}

LabelSet::LabelSet(const LabelsDecl &decl) : decl_(decl) {}

std::uint32_t LabelSet::annotator_id(const std::string &name) {
  auto [it, added] = annotator_ids_.try_emplace(name, static_cast<std::uint32_t>(annotators_.size()));
  if (added) annotators_.push_back(name);
  return it->second;
}

void LabelSet::add_row(std::string_view text, const std::vector<rawjson::Member> &members, std::size_t line,
                       const fs::path &file, std::vector<Diagnostic> &diags) {
  auto at = [&](const rawjson::Member *m) {
    int col = 0;
    if (m != nullptr && jsonl_) col = static_cast<int>(rawjson::column_of(text, m->value.off));
    return Location{file.string(), static_cast<int>(line), col};
  };
  auto value = [&](const rawjson::Member &m) { return text.substr(m.value.off, m.value.len); };
  const rawjson::Member *key = nullptr, *who = nullptr;
  for (const auto &m : members) {
    if (m.key == decl_.key)
      key = &m;
    else if (m.key == annotator_column_)
      who = &m;
    else if (decl_.field(m.key) == nullptr)
      diags.push_back(
          {at(&m), fmt::format("unknown label column '{}'{}; the labels' fields are {} (declare it under "
                               "labels.fields, or remove the column)",
                               m.key, did_you_mean(m.key, decl_.field_names()), join_list(decl_.field_names()))});
  }
  if (key == nullptr || key_text(value(*key)).empty()) {
    diags.push_back({at(nullptr), fmt::format("a label row without its key '{}' (labels.key): every row names the "
                                              "record it labels",
                                              decl_.key)});
    return;
  }
  const std::string k = key_text(value(*key));
  const std::string person = who == nullptr ? std::string() : key_text(value(*who));
  auto [it, added] = index_.try_emplace(k, static_cast<std::uint32_t>(keys_.size()));
  if (added) keys_.push_back(&it->first);
  const std::uint32_t row = it->second, a = annotator_id(person);
  rows_read_.push_back({row, a, static_cast<std::uint32_t>(line)});  // (a person twice on one record: read_file)
  for (const auto &m : members) {
    const LabelFieldDecl *f = decl_.field(m.key);
    if (f == nullptr) continue;
    std::string why;
    auto code = code_label(*f, value(m), why);  // (a CSV cell reaches here as a JSON string)
    if (code)
      read_.push_back({row, {static_cast<std::uint32_t>(f - decl_.fields.data()), a, *code}});
    else if (!why.empty())
      diags.push_back({at(&m), fmt::format("label '{}' of record '{}': {}", f->name, k, why)});
  }
}

// After the file: a record labelled twice by one person is an error; the labels are laid out by record.
void LabelSet::index_rows(const fs::path &file, std::vector<Diagnostic> &diags) {
  std::sort(rows_read_.begin(), rows_read_.end(), [](const RowRead &x, const RowRead &y) {
    return x.row != y.row ? x.row < y.row : x.annotator != y.annotator ? x.annotator < y.annotator : x.line < y.line;
  });
  for (std::size_t i = 1; i < rows_read_.size() && diags.size() < kMaxListed; ++i) {
    const RowRead &p = rows_read_[i - 1], &r = rows_read_[i];
    if (p.row != r.row || p.annotator != r.annotator) continue;
    const std::string &k = *keys_[r.row], &person = annotators_[r.annotator];
    diags.push_back({{file.string(), static_cast<int>(r.line), 0},
                     person.empty() ? fmt::format("record '{}' is labelled twice (also on line {}; no annotator column: "
                                                  "one row per record; name the person's column with labels.annotator)",
                                                  k, p.line)
                                    : fmt::format("record '{}' is labelled twice by '{}' (also on line {})", k, person,
                                                  p.line)});
  }
  std::vector<RowRead>().swap(rows_read_);
  std::stable_sort(read_.begin(), read_.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
  offsets_.assign(keys_.size() + 1, 0);
  for (const auto &[row, l] : read_) ++offsets_[row + 1];
  for (std::size_t i = 1; i < offsets_.size(); ++i) offsets_[i] += offsets_[i - 1];
  labels_.reserve(read_.size());
  for (const auto &[row, l] : read_) labels_.push_back(l);
  std::vector<std::pair<std::uint32_t, Label>>().swap(read_);
  seen_flag_.assign(keys_.size(), 0);
}

void LabelSet::read_file(const fs::path &file) {
  std::vector<Diagnostic> diags;
  std::unique_ptr<io::RecordReader> reader;
  try {
    reader = io::open_dataset(file, "", json::object());
  } catch (const io::DataError &e) {
    throw ConfigError({{{file.string(), 0, 0}, e.what()}});
  }
  std::error_code ec;
  if (auto size = fs::file_size(file, ec); !ec) index_.reserve(static_cast<std::size_t>(size / 48));  // ~ rows
  jsonl_ = run_folder::data_format(file, "") == "jsonl";  // a CSV row is handed over re-written: no columns
  const auto &cols = reader->columns();
  annotator_column_ = decl_.annotator;
  if (annotator_column_.empty() && std::find(cols.begin(), cols.end(), "annotator") != cols.end())
    annotator_column_ = "annotator";  // what the report's "Download labels" writes without labels.annotator
  if (!decl_.annotator.empty() && std::find(cols.begin(), cols.end(), decl_.annotator) == cols.end() && !cols.empty())
    diags.push_back({{file.string(), 1, 0},
                     fmt::format("the labels have no column '{}' (labels.annotator); "
                                 "columns: {}",
                                 decl_.annotator, join_list(cols))});
  std::string text;
  std::vector<rawjson::Member> members;
  try {
    while (diags.size() < kMaxListed && reader->next_text(text, &members)) {
      if (members.empty()) rawjson::object_members(text, members);
      if (!reader->record_problem().empty()) {
        diags.push_back({{file.string(), static_cast<int>(reader->line()), 0}, reader->record_problem()});
        continue;
      }
      add_row(text, members, reader->line(), file, diags);
    }
  } catch (const io::DataError &e) {
    diags.push_back(
        {{file.string(), static_cast<int>(e.line()), static_cast<int>(e.column())}, e.problem() + " — " + e.hint()});
  }
  index_rows(file, diags);
  if (!diags.empty()) throw ConfigError(std::move(diags));
}

void LabelSet::check_dataset(const DatasetDecl &ds, const io::RecordLimits &limits) const {
  auto reader = io::open_dataset(ds.path, ds.format, ds.options, limits);
  const bool jsonl = run_folder::data_format(ds.path, ds.format) == "jsonl";
  std::vector<Diagnostic> diags;
  std::string text;
  std::vector<rawjson::Member> members;
  long long left = ds.limit;
  while (diags.size() < kMaxListed && left-- != 0 && reader->next_text(text, &members)) {
    if (members.empty()) rawjson::object_members(text, members);
    for (const auto &m : members) {
      const LabelFieldDecl *f = decl_.field(m.key);
      if (f == nullptr) continue;
      std::string_view v = std::string_view(text).substr(m.value.off, m.value.len);
      std::string why;
      auto check = [&](std::string_view one) {
        if (!code_label(*f, one, why) && !why.empty())
          diags.push_back({{ds.path.string(), static_cast<int>(reader->line()),
                            jsonl ? static_cast<int>(rawjson::column_of(text, m.value.off)) : 0},
                           fmt::format("label field '{}': {}", f->name, why)});
      };
      std::vector<rawjson::Span> spans;
      if (!v.empty() && v.front() == '[' && rawjson::array_elements(v, spans))
        for (const auto &s : spans) check(v.substr(s.off, s.len));
      else
        check(v);
    }
  }
  if (!diags.empty()) throw ConfigError(std::move(diags));
}

bool LabelSet::labels_of(std::string_view record, const std::vector<rawjson::Member> &members, std::vector<Label> &out,
                         std::string *key) {
  const rawjson::Member *k = nullptr;
  for (const auto &m : members)
    if (m.key == decl_.key) k = &m;
  if (key != nullptr) *key = k == nullptr ? std::string() : key_text(record.substr(k->value.off, k->value.len));
  if (!from_records()) {
    if (k == nullptr) return false;
    labels_of_key(key != nullptr ? *key : key_text(record.substr(k->value.off, k->value.len)), out);
    return true;
  }
  // Record mode: the label fields of the record; a list holds one label per person (#1, #2, ...).
  std::vector<rawjson::Span> spans;
  for (const auto &m : members) {
    const LabelFieldDecl *f = decl_.field(m.key);
    if (f == nullptr) continue;
    const auto field = static_cast<std::uint32_t>(f - decl_.fields.data());
    std::string_view v = record.substr(m.value.off, m.value.len);
    std::string why;
    auto take = [&](std::string_view one, const std::string &who) {
      if (auto code = code_label(*f, one, why))
        out.push_back({field, annotator_id(who), *code});
      else if (!why.empty() && invalid_++ == 0)
        first_invalid_ = fmt::format("label field '{}': {}", f->name, why);
    };
    if (!v.empty() && v.front() == '[' && rawjson::array_elements(v, spans))
      for (std::size_t i = 0; i < spans.size(); ++i)
        take(v.substr(spans[i].off, spans[i].len), fmt::format("#{}", i + 1));
    else
      take(v, "");
  }
  return true;
}

void LabelSet::labels_of_key(const std::string &key, std::vector<Label> &out) {
  // Labels are usually in the records' order: the record after the last one found is tried before the hash.
  std::uint32_t row = next_row_;
  if (row >= keys_.size() || *keys_[row] != key) {
    auto it = index_.find(key);
    if (it == index_.end()) return;
    row = it->second;
  }
  next_row_ = row + 1;
  if (seen_flag_[row] == 0) {
    seen_flag_[row] = 1;
    ++seen_;
  }
  out.insert(out.end(), labels_.begin() + offsets_[row], labels_.begin() + offsets_[row + 1]);
}

std::string LabelSet::labels_json(const std::vector<Label> &labels) const {
  json out = json::object();
  for (const auto &l : labels) {
    const LabelFieldDecl &f = decl_.fields[l.field];
    out[f.name].push_back({{"annotator", annotators_[l.annotator]}, {"value", label_value(f, l.code)}});
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace evalgraph::agree
