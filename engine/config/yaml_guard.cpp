#include "config/yaml_guard.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <vector>

namespace evalgraph {

namespace {
bool blank(char c) { return c == ' ' || c == '\t'; }
}  // namespace

std::optional<Location> yaml_too_deep(std::string_view text, const std::string &file, int max_depth) {
  std::vector<std::size_t> block;  // indentation of the open block collections
  int flow = 0;                    // open flow collections ([ and {)
  char quote = 0;                  // inside a quoted scalar that may go on over lines
  long block_scalar = -1;          // in a block scalar (| or >): lines indented more than this are its text
  int line_no = 0;
  auto too_deep = [&](std::size_t col) -> std::optional<Location> {
    if (static_cast<long>(block.size()) + flow > max_depth) return Location{file, line_no, static_cast<int>(col) + 1};
    return std::nullopt;
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t indent = 0;
    while (indent < line.size() && line[indent] == ' ') ++indent;
    if (block_scalar >= 0) {
      if (indent == line.size() || static_cast<long>(indent) > block_scalar) continue;
      block_scalar = -1;
    }
    std::size_t i = 0;
    bool node_start = false;  // at the start of a node (where [ { " ' | > begin something)
    if (quote == 0 && flow == 0) {
      if (indent == line.size() || line[indent] == '#') continue;  // blank or a comment
      while (!block.empty() && block.back() >= indent) block.pop_back();
      block.push_back(indent);
      i = indent;
      // Compact entries ("- - x", "? x"): each holds a node one level further in.
      while (i < line.size() && (line[i] == '-' || line[i] == '?') && (i + 1 == line.size() || blank(line[i + 1]))) {
        ++i;
        while (i < line.size() && blank(line[i])) ++i;
        if (i < line.size() && line[i] != '#') block.push_back(i);
      }
      if (auto hit = too_deep(indent)) return hit;
      node_start = true;
    } else if (flow > 0) {
      node_start = true;
    }
    for (; i < line.size(); ++i) {
      const char c = line[i];
      if (quote != 0) {
        if (quote == '"' && c == '\\') {
          ++i;
        } else if (c == quote) {
          if (quote == '\'' && i + 1 < line.size() && line[i + 1] == '\'') ++i;  // '' is a quote inside
          else quote = 0;
        }
        continue;
      }
      if (c == '#' && (i == 0 || blank(line[i - 1]))) break;  // a comment
      if (blank(c)) continue;
      if (flow > 0) {
        if (c == '[' || c == '{') {
          ++flow;
          if (auto hit = too_deep(i)) return hit;
          node_start = true;
        } else if (c == ']' || c == '}') {
          --flow;
          node_start = false;
        } else if (c == ',' || c == ':') {
          node_start = true;
        } else if (node_start && (c == '"' || c == '\'')) {
          quote = c;
          node_start = false;
        } else {
          node_start = false;
        }
        continue;
      }
      // Block context: [ { " ' | > mean something only where a node starts.
      if (node_start) {
        if (c == '[' || c == '{') {
          flow = 1;
          if (auto hit = too_deep(i)) return hit;
          node_start = true;
          continue;
        }
        if (c == '"' || c == '\'') {
          quote = c;
          node_start = false;
          continue;
        }
        if (c == '&' || c == '!') {  // an anchor or a tag, then the node itself
          while (i + 1 < line.size() && !blank(line[i + 1])) ++i;
          continue;
        }
        if (c == '|' || c == '>') {
          std::size_t j = i + 1;
          while (j < line.size() && (line[j] == '+' || line[j] == '-' || (line[j] >= '0' && line[j] <= '9'))) ++j;
          while (j < line.size() && blank(line[j])) ++j;
          if (j == line.size() || line[j] == '#') {
            block_scalar = static_cast<long>(indent);
            break;
          }
        }
        node_start = false;
      }
      if (c == ':' && (i + 1 == line.size() || blank(line[i + 1]))) node_start = true;
    }
  }
  return std::nullopt;
}

namespace {
void count_values(const YAML::Node &n, std::size_t cap, std::size_t &total) {
  if (++total > cap) return;
  if (n.IsMap()) {
    for (const auto &kv : n) {
      count_values(kv.second, cap, total);
      if (total > cap) return;
    }
  } else if (n.IsSequence()) {
    for (const auto &x : n) {
      count_values(x, cap, total);
      if (total > cap) return;
    }
  }
}
}  // namespace

std::size_t yaml_expanded_values(const YAML::Node &root, std::size_t cap) {
  std::size_t total = 0;
  count_values(root, cap, total);
  return std::min(total, cap + 1);
}

YAML::Node load_yaml_checked(const std::string &text, const std::string &file) {
  if (auto at = yaml_too_deep(text, file))
    throw ConfigError({{*at, fmt::format("the YAML nests lists and mappings deeper than {} levels here; nothing this "
                                         "deep is needed: flatten it (or keep deep data in a file of its own)",
                                         kMaxYamlDepth)}});
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion &e) {
    throw ConfigError({{{file, e.mark.line + 1, e.mark.column + 1},
                        fmt::format("the YAML nests lists and mappings too deep to be read (more than {} levels); "
                                    "flatten it", kMaxYamlDepth)}});
  } catch (const YAML::Exception &e) {
    throw ConfigError({{{file, e.mark.line + 1, e.mark.column + 1}, "YAML syntax: " + e.msg}});
  }
  if (yaml_expanded_values(root) > kMaxYamlValues) {
    // Name the top-level entry where the count runs over, if the document is a mapping.
    Location at{file, 1, 1};
    std::string what = "the document";
    if (root.IsMap()) {
      std::size_t total = 1;
      for (const auto &kv : root) {
        count_values(kv.second, kMaxYamlValues, total);
        if (total > kMaxYamlValues) {
          if (!kv.first.Mark().is_null()) at = {file, kv.first.Mark().line + 1, kv.first.Mark().column + 1};
          what = "'" + kv.first.Scalar() + "'";
          break;
        }
      }
    }
    throw ConfigError({{at, fmt::format("{} stands for more than {} values once its aliases (*name) are expanded; "
                                        "write the values out, or use fewer nested aliases",
                                        what, kMaxYamlValues)}});
  }
  return root;
}

}  // namespace evalgraph
