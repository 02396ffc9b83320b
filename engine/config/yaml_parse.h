#pragma once
// The pipeline parser's shared pieces (internal to engine/config): the parser state and the helpers that turn
// YAML into JSON with locations and report problems. pipeline.cpp parses the whole file; expect_config.cpp and
// labels_config.cpp parse `expect:`, `labels:` and `agreement:` with the same helpers.
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/pipeline.h"

namespace evalgraph::config_detail {
using nlohmann::json;

// The parser state: the file's name for messages and the problems found so far.
struct Ctx {
  std::string file;
  std::vector<Diagnostic> diags;
  Location at(const YAML::Node &n) const {
    YAML::Mark m = n.Mark();
    if (m.line < 0) return {file, 0, 0};
    return {file, m.line + 1, m.column + 1};
  }
  void error(const YAML::Node &n, std::string msg) { diags.push_back({at(n), std::move(msg)}); }
};

// A plain YAML scalar becomes null/bool/int/float when it reads as one (YAML 1.2 core schema); a quoted
// one stays a string.
json scalar_to_json(const YAML::Node &n);
// The YAML value as JSON; with `locs`, where each part of it stood (by JSON pointer from `ptr`).
json to_json(Ctx &ctx, const YAML::Node &n, LocationMap *locs, const std::string &ptr);
// Replaces ${VAR} and ${VAR:-default} in every string of `v` with the environment's value.
bool expand_env(json &v, std::string &why);
// Reports keys of a mapping that are not in `allowed`, with a did-you-mean.
void check_keys(Ctx &ctx, const YAML::Node &map, const std::vector<std::string> &allowed, const std::string &what);
// True when `n` is of type `t`; else a message naming `what`.
bool expect(Ctx &ctx, const YAML::Node &n, YAML::NodeType::value t, const std::string &what);
// The scalar's text; a message when `n` is not a single value.
std::string scalar(Ctx &ctx, const YAML::Node &n, const std::string &what);

// `metric: node.field[.sub...]` split into the node and the path inside its output (`what` names it in messages).
void parse_metric(Ctx &ctx, const YAML::Node &m, const char *what, std::string &metric, std::string &node,
                  std::vector<std::string> &path);
void parse_expect(Ctx &ctx, const YAML::Node &n, std::vector<ExpectDecl> &out);  // expect_config.cpp
void parse_labels(Ctx &ctx, const YAML::Node &n, const std::filesystem::path &base,
                  LabelsDecl &out);                                                    // labels_config.cpp
void parse_agreement(Ctx &ctx, const YAML::Node &n, std::vector<AgreementDecl> &out);  // labels_config.cpp

}  // namespace evalgraph::config_detail
