#include "exec/raw_record.h"

namespace evalgraph {

bool RawRecord::assign(std::string text) {
  owned_.clear();
  fields_.clear();
  thread_local std::vector<rawjson::Member> members;
  if (!rawjson::object_members(text, members)) {
    text_.clear();
    return false;
  }
  text_ = std::move(text);
  fields_.reserve(members.size());
  for (auto &m : members) {
    // A repeated key: the last value wins, in the first one's place (as a JSON parser would read it).
    bool replaced = false;
    for (auto &f : fields_) {
      if (f.key == m.key) {
        f.span = m.value;
        replaced = true;
        break;
      }
    }
    if (!replaced) fields_.push_back({std::move(m.key), -1, m.value});
  }
  return true;
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
  for (auto &f : fields_) {
    if (f.key != key) continue;
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

void RawRecord::write(std::string &out, std::string_view extra) const {
  out.push_back('{');
  bool first = true;
  for (const auto &f : fields_) {
    if (!first) out.push_back(',');
    first = false;
    rawjson::append_string(out, f.key);
    out.push_back(':');
    out.append(value(f));
  }
  if (!extra.empty()) {
    if (!first) out.push_back(',');
    out.append(extra);
  }
  out.push_back('}');
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
