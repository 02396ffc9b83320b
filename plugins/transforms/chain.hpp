// Shared by the transform plugins (header-only, SDK only): the "chain" rule that lets one pipeline hold
// several transformations over a dataset whose rows name their transformation.
//
// A transform node may be bound to one transformation id (`with: {transformation: gpt_4_o}`). It reads the
// row's `transformation` field (optional port) and the text of the transform node before it in the chain
// (optional port `previous`). When the row belongs to its transformation it produces the text; otherwise it
// passes `previous` through unchanged (or writes nothing when there is none). The last node of the chain
// therefore holds the transformed text of every row, whichever transformation made it, and every row costs
// exactly one real transformation. Without `transformation` the node applies to every row.
#pragma once
#include <evalgraph/plugin.hpp>
#include <optional>
#include <string>

namespace evalgraph_transforms {

using evalgraph::json;

inline bool applies(const std::optional<std::string> &transformation, const json &in) {
  if (!transformation) return true;
  auto t = in.find("transformation");
  if (t == in.end() || t->is_null()) return true;
  std::string row = t->is_string() ? t->get<std::string>() : t->dump();
  return row == *transformation;
}

// The row's original text (port `original`); an InputError where it is not a string.
inline std::string original_text(const json &in) {
  const json &o = in.at("original");
  if (!o.is_string()) throw evalgraph::InputError("the original text is not a string");
  return o.get<std::string>();
}

// Output for a row of another transformation: pass the previous node's text through.
inline json pass_through(const json &in) {
  json out = {{"applies", false}};
  auto p = in.find("previous");
  if (p != in.end() && p->is_string()) out["text"] = *p;
  return out;
}

inline constexpr auto &render = evalgraph::render_template;  // {name} placeholders (evalgraph/plugin.hpp)

inline std::string trim(const std::string &s) {
  std::size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

}  // namespace evalgraph_transforms
