#include "config/yaml_guard.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace evalgraph {

namespace {
bool blank(char c) { return c == ' ' || c == '\t'; }

// yaml_too_deep's scanner: reads the text a line at a time and keeps what is open at each point, the way YAML
// nests: block collections by their indentation, flow collections ([ and {) by their brackets.
class NestingScan {
 public:
  NestingScan(const std::string &file, int max_depth) : file_(file), max_depth_(max_depth) {}

  // One line (its end of line removed); returns where the nesting first passes max_depth.
  std::optional<Location> scan_line(std::string_view line) {
    ++line_no_;
    std::size_t indent = 0;
    while (indent < line.size() && line[indent] == ' ') ++indent;
    if (block_scalar_ >= 0) {
      if (indent == line.size() || static_cast<long>(indent) > block_scalar_) return std::nullopt;
      block_scalar_ = -1;
    }
    std::size_t i = 0;
    node_start_ = false;
    if (quote_ == 0 && flow_ == 0) {
      if (indent == line.size() || line[indent] == '#') return std::nullopt;  // blank or a comment
      i = open_blocks(line, indent);
      if (auto hit = too_deep(indent)) return hit;
      node_start_ = true;
    } else if (flow_ > 0) {
      node_start_ = true;
    }
    for (; i < line.size(); ++i) {
      const char c = line[i];
      if (quote_ != 0) {
        pass_quoted(line, i);
        continue;
      }
      if (c == '#' && (i == 0 || blank(line[i - 1]))) break;  // a comment
      if (blank(c)) continue;
      if (auto hit = flow_ > 0 ? flow_char(c, i) : block_char(line, i, indent)) return hit;
      if (block_scalar_ >= 0) break;  // a block scalar's text follows on the next lines
    }
    return std::nullopt;
  }

 private:
  std::optional<Location> too_deep(std::size_t col) const {
    if (static_cast<long>(block_.size()) + flow_ > max_depth_) return Location{file_, line_no_, static_cast<int>(col) + 1};
    return std::nullopt;
  }

  // A line in block context: closes the block collections indented as much or more, opens its own, and one
  // more for each compact entry ("- - x", "? x"). Returns where the line's node starts.
  std::size_t open_blocks(std::string_view line, std::size_t indent) {
    while (!block_.empty() && block_.back() >= indent) block_.pop_back();
    block_.push_back(indent);
    std::size_t i = indent;
    while (i < line.size() && (line[i] == '-' || line[i] == '?') && (i + 1 == line.size() || blank(line[i + 1]))) {
      ++i;
      while (i < line.size() && blank(line[i])) ++i;
      if (i < line.size() && line[i] != '#') block_.push_back(i);
    }
    return i;
  }

  // Inside a quoted scalar: passes an escape (double quotes), or ends the quote ('' inside single quotes is one).
  void pass_quoted(std::string_view line, std::size_t &i) {
    const char c = line[i];
    if (quote_ == '"' && c == '\\') {
      ++i;
    } else if (c == quote_) {
      if (quote_ == '\'' && i + 1 < line.size() && line[i + 1] == '\'') ++i;  // '' is a quote inside
      else quote_ = 0;
    }
  }

  // Inside a flow collection: brackets open and close, a quote starts a scalar only where a node starts.
  std::optional<Location> flow_char(char c, std::size_t i) {
    if (c == '[' || c == '{') {
      ++flow_;
      node_start_ = true;
      return too_deep(i);
    }
    if (c == ']' || c == '}') {
      --flow_;
      node_start_ = false;
    } else if (c == ',' || c == ':') {
      node_start_ = true;
    } else if (node_start_ && (c == '"' || c == '\'')) {
      quote_ = c;
      node_start_ = false;
    } else {
      node_start_ = false;
    }
    return std::nullopt;
  }

  // Block context: [ { " ' | > mean something only where a node starts; "key: " starts one.
  std::optional<Location> block_char(std::string_view line, std::size_t &i, std::size_t indent) {
    const char c = line[i];
    if (node_start_) {
      if (c == '[' || c == '{') {
        flow_ = 1;
        node_start_ = true;
        return too_deep(i);
      }
      if (c == '"' || c == '\'') {
        quote_ = c;
        node_start_ = false;
        return std::nullopt;
      }
      if (c == '&' || c == '!') {  // an anchor or a tag, then the node itself
        while (i + 1 < line.size() && !blank(line[i + 1])) ++i;
        return std::nullopt;
      }
      if (c == '|' || c == '>') {
        std::size_t j = i + 1;
        while (j < line.size() && (line[j] == '+' || line[j] == '-' || (line[j] >= '0' && line[j] <= '9'))) ++j;
        while (j < line.size() && blank(line[j])) ++j;
        if (j == line.size() || line[j] == '#') {
          block_scalar_ = static_cast<long>(indent);
          return std::nullopt;
        }
      }
      node_start_ = false;
    }
    if (c == ':' && (i + 1 == line.size() || blank(line[i + 1]))) node_start_ = true;
    return std::nullopt;
  }

  const std::string &file_;
  const int max_depth_;
  std::vector<std::size_t> block_;  // indentation of the open block collections
  int flow_ = 0;                    // open flow collections ([ and {)
  char quote_ = 0;                  // inside a quoted scalar that may go on over lines
  long block_scalar_ = -1;          // in a block scalar (| or >): lines indented more than this are its text
  int line_no_ = 0;
  bool node_start_ = false;         // at the start of a node (where [ { " ' | > begin something)
};
}  // namespace

std::optional<Location> yaml_too_deep(std::string_view text, const std::string &file, int max_depth) {
  NestingScan scan(file, max_depth);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (auto hit = scan.scan_line(line)) return hit;
  }
  return std::nullopt;
}

namespace {
struct YamlExpansion {
  std::size_t values = 0;  // values counted, aliases expanded (at most cap + 1)
  int depth = 0;           // the deepest path seen
};

// Walks the node graph with an explicit stack (yaml-cpp hands back a graph: an alias inside its own anchor,
// `&x {a: *x}`, is a cycle that a recursive walk follows until the stack is gone). Stops once more than `cap`
// values are counted or a path runs deeper than kMaxYamlExpandedDepth.
YamlExpansion expand(const YAML::Node &root, std::size_t cap) {
  YamlExpansion r;
  std::vector<std::pair<YAML::Node, int>> todo;
  todo.emplace_back(root, 1);
  while (!todo.empty()) {
    auto [n, depth] = std::move(todo.back());
    todo.pop_back();
    r.depth = std::max(r.depth, depth);
    if (++r.values > cap || depth > kMaxYamlExpandedDepth) break;
    if (n.IsMap()) {
      for (const auto &kv : n) todo.emplace_back(kv.second, depth + 1);
    } else if (n.IsSequence()) {
      for (const auto &x : n) todo.emplace_back(x, depth + 1);
    }
  }
  r.values = std::min(r.values, cap + 1);
  return r;
}

// Whether the text may hold an alias (`*name` where a node starts); only chooses the wording of an error.
bool has_alias(std::string_view text) {
  for (std::size_t i = text.find('*'); i != std::string_view::npos; i = text.find('*', i + 1)) {
    const char before = i == 0 ? ' ' : text[i - 1];
    const char after = i + 1 < text.size() ? text[i + 1] : ' ';
    const bool starts = before == ' ' || before == '\t' || before == '\n' || before == '[' || before == '{' ||
                        before == ',' || before == ':' || before == '-';
    if (starts && after != ' ' && after != '\t' && after != '\n' && after != '\r' && after != '*') return true;
  }
  return false;
}

bool over(const YamlExpansion &e, std::size_t cap) { return e.values > cap || e.depth > kMaxYamlExpandedDepth; }
}  // namespace

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
  YamlExpansion e = expand(root, kMaxYamlValues);
  if (!over(e, kMaxYamlValues)) return root;
  // Name the top-level entry where it runs over, if the document is a mapping.
  Location at{file, 1, 1};
  std::string what = "the document";
  if (root.IsMap()) {
    for (const auto &kv : root) {
      YamlExpansion part = expand(kv.second, kMaxYamlValues);
      if (over(part, kMaxYamlValues)) {
        if (!kv.first.Mark().is_null()) at = {file, kv.first.Mark().line + 1, kv.first.Mark().column + 1};
        what = "'" + kv.first.Scalar() + "'";
        e = part;
        break;
      }
    }
  }
  if (e.depth > kMaxYamlExpandedDepth)
    throw ConfigError({{at, fmt::format("{} nests deeper than {} levels once its aliases (*name) are expanded: an "
                                        "alias inside the node its own anchor (&name) marks never ends; use the "
                                        "alias outside that node, or write the values out",
                                        what, kMaxYamlExpandedDepth)}});
  if (!has_alias(text))
    throw ConfigError({{at, fmt::format("{} holds more than {} values; no configuration needs that many: split it "
                                        "into smaller files, or keep bulk data in the data set",
                                        what, kMaxYamlValues)}});
  throw ConfigError({{at, fmt::format("{} stands for more than {} values once its aliases (*name) are expanded; "
                                      "write the values out, or use fewer nested aliases",
                                      what, kMaxYamlValues)}});
}

YAML::Node load_yaml_file_checked(const std::string &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError({{{file, 0, 0}, "cannot read the file; check that it exists and is readable"}});
  std::ostringstream text;
  text << in.rdbuf();
  return load_yaml_checked(text.str(), file);
}

}  // namespace evalgraph
