#include "io/raw_record.h"

#include <unordered_map>

namespace evalgraph {

bool RawRecord::assign(std::string text) {
  thread_local std::vector<rawjson::Member> members;
  if (!rawjson::object_members(text, members)) {
    owned_.clear();
    fields_.clear();
    text_.clear();
    return false;
  }
  assign(std::move(text), members);
  return true;
}

void RawRecord::assign(std::string text, std::vector<rawjson::Member> &members) {
  owned_.clear();
  fields_.clear();
  text_ = std::move(text);
  intact_ = true;
  fields_.reserve(members.size());
  // A repeated key: the last value wins, in the first one's place (as a JSON parser would read it). (The
  // dataset readers hand out records without repeated keys; text from elsewhere may have them.) Looked up
  // one by one for the usual few fields, through an index for a wide record (no quadratic cost).
  std::unordered_map<std::string_view, std::size_t> index;
  const bool wide = members.size() > 32;
  for (auto &m : members) {
    bool replaced = false;
    if (wide) {
      auto it = index.find(m.key);
      if (it != index.end()) {
        fields_[it->second].span = m.value;
        replaced = true;
      }
    } else {
      for (auto &f : fields_) {
        if (f.key == m.key) {
          f.span = m.value;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) {
      fields_.push_back({std::move(m.key), -1, m.value});
      if (wide) index.emplace(fields_.back().key, fields_.size() - 1);
    }
  }
  base_ = fields_.size();
}

std::string_view RawRecord::value(const Field &f) const {
  if (f.owned >= 0) return owned_[static_cast<std::size_t>(f.owned)];
  return std::string_view(text_).substr(f.span.off, f.span.len);
}

std::optional<std::string_view> RawRecord::get(std::string_view key) const {
  for (const auto &f : fields_)
    if (f.key == key) return value(f);
  return std::nullopt;
}

void RawRecord::set(std::string_view key, std::string value_json) {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    Field &f = fields_[i];
    if (f.key != key) continue;
    if (i < base_) intact_ = false;
    if (f.owned >= 0) {
      owned_[static_cast<std::size_t>(f.owned)] = std::move(value_json);
    } else {
      f.owned = static_cast<std::int32_t>(owned_.size());
      owned_.push_back(std::move(value_json));
    }
    return;
  }
  fields_.push_back({std::string(key), static_cast<std::int32_t>(owned_.size()), {}});
  owned_.push_back(std::move(value_json));
}

std::size_t RawRecord::text_bytes() const {
  std::size_t n = 2;  // {}
  for (const auto &f : fields_) {
    std::string quoted;
    rawjson::append_string(quoted, f.key);
    n += quoted.size() + 1 + value(f).size() + 1;  // "key":value,
  }
  return fields_.empty() ? n : n - 1;
}

std::size_t RawRecord::write(std::string &out) const {
  out.push_back('{');
  std::size_t added_at = out.size();
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (i > 0) out.push_back(',');
    if (i == base_) added_at = out.size();
    rawjson::append_string(out, fields_[i].key);
    out.push_back(':');
    out.append(value(fields_[i]));
  }
  if (base_ >= fields_.size()) added_at = out.size();
  out.push_back('}');
  return added_at;
}

std::string RawRecord::combine(const RawRecord &base, std::string_view added) {
  std::string out;
  base.write(out);
  std::string_view inner = added.size() >= 2 ? added.substr(1, added.size() - 2) : std::string_view();
  if (!inner.empty()) {
    out.pop_back();  // '}'
    if (!base.fields_.empty()) out.push_back(',');
    out.append(inner);
    out.push_back('}');
  }
  return out;
}

std::optional<std::string_view> member_of(std::string_view object_json, std::string_view sub) {
  if (object_json.empty() || object_json.front() != '{') return std::nullopt;
  thread_local std::vector<rawjson::Member> members;
  if (!rawjson::object_members(object_json, members)) return std::nullopt;
  std::optional<std::string_view> found;
  for (const auto &m : members)  // the last of repeated keys wins
    if (m.key == sub) found = object_json.substr(m.value.off, m.value.len);
  return found;
}

}  // namespace evalgraph
