// `labels:` and `agreement:` as written (docs/agreement.md): their shape here; whether an agreement entry's
// metric is a node's output is checked with the plan, and the labels themselves when they are read
// (agree/labels.cpp), before any record moves.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "config/yaml_parse.h"

namespace evalgraph {

const LabelFieldDecl *LabelsDecl::field(const std::string &name) const {
  for (const auto &f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> LabelsDecl::field_names() const {
  std::vector<std::string> out;
  for (const auto &f : fields) out.push_back(f.name);
  return out;
}

namespace config_detail {
namespace {

const std::vector<std::string> kLabelTypes = {"binary", "ordinal", "category", "number"};

// One field of `labels.fields`: `name: {type: ordinal, values: [1, 2, 3]}`.
LabelFieldDecl parse_label_field(Ctx &ctx, const YAML::Node &key, const YAML::Node &v) {
  LabelFieldDecl f;
  f.name = key.Scalar();
  f.at = ctx.at(key);
  if (!expect(ctx, v, YAML::NodeType::Map, fmt::format("label field '{}' ({{type: binary}})", f.name))) return f;
  check_keys(ctx, v, {"type", "values"}, fmt::format("label field '{}'", f.name));
  if (auto t = v["type"]) {
    f.type = scalar(ctx, t, "label 'type'");
    if (std::find(kLabelTypes.begin(), kLabelTypes.end(), f.type) == kLabelTypes.end())
      ctx.error(t, fmt::format("unknown label type '{}'{}; use {}", f.type, did_you_mean(f.type, kLabelTypes),
                               join_list(kLabelTypes)));
  } else {
    ctx.error(v, fmt::format("label field '{}' needs a type: {}", f.name, join_list(kLabelTypes)));
  }
  const bool needs_values = f.type == "ordinal" || f.type == "category";
  if (auto vals = v["values"]) {
    f.values = to_json(ctx, vals, nullptr, "");
    std::set<std::string> seen;
    bool ok = f.values.is_array() && f.values.size() >= 2;
    for (const auto &x : f.values.is_array() ? f.values : json::array()) {
      if (!(x.is_string() || x.is_number() || x.is_boolean())) ok = false;
      if (!seen.insert(x.is_string() ? x.get<std::string>() : x.dump()).second) ok = false;
    }
    if (!needs_values)
      ctx.error(vals, fmt::format("label field '{}' is {}: values: goes with ordinal and category", f.name, f.type));
    else if (!ok)
      ctx.error(vals, fmt::format("label field '{}': values must be a list of at least two different values "
                                  "(numbers or texts){}",
                                  f.name, f.type == "ordinal" ? ", in their order" : ""));
  } else if (needs_values) {
    ctx.error(v, fmt::format("label field '{}' is {}: list its values, e.g. values: {}", f.name, f.type,
                             f.type == "ordinal" ? "[1, 2, 3, 4, 5]" : "[billing, outage, other]"));
  }
  return f;
}

}  // namespace

void parse_labels(Ctx &ctx, const YAML::Node &n, const std::filesystem::path &base, LabelsDecl &out) {
  out.where = out.path_where = out.key_where = ctx.at(n);
  out.declared = true;
  if (!expect(ctx, n, YAML::NodeType::Map, "'labels' ({path, key, annotator, fields})")) return;
  check_keys(ctx, n, {"path", "key", "annotator", "fields"}, "'labels'");
  if (auto p = n["path"]) {
    out.path_text = scalar(ctx, p, "labels 'path'");
    out.path_where = ctx.at(p);
    std::filesystem::path path(out.path_text);
    out.path = (path.is_absolute() ? path : base / path).lexically_normal();
  }
  if (auto k = n["key"]) {
    out.key = scalar(ctx, k, "labels 'key'");
    out.key_where = ctx.at(k);
    if (out.key.empty()) ctx.error(k, "labels 'key' names the field that identifies a record, e.g. key: id");
  }
  if (auto a = n["annotator"]) {
    out.annotator = scalar(ctx, a, "labels 'annotator'");
    if (out.path.empty())
      ctx.error(a,
                "labels 'annotator' names a column of the labels file: give the file with path:, or write "
                "several labels of a record field as a list (one per person)");
  }
  auto fields = n["fields"];
  if (!fields) {
    ctx.error(n, "'labels' needs fields: (name: {type: binary | ordinal | category | number})");
    return;
  }
  if (!expect(ctx, fields, YAML::NodeType::Map, "labels 'fields' (name: {type: ...})")) return;
  for (const auto &kv : fields) {
    LabelFieldDecl f = parse_label_field(ctx, kv.first, kv.second);
    if (f.name == out.key || (!out.annotator.empty() && f.name == out.annotator))
      ctx.error(kv.first, fmt::format("label field '{}' is also the labels' {}", f.name,
                                      f.name == out.key ? "key" : "annotator column"));
    out.fields.push_back(std::move(f));
  }
  if (out.fields.empty()) ctx.error(fields, "labels 'fields' is empty: declare at least one label field");
}

void parse_agreement(Ctx &ctx, const YAML::Node &n, std::vector<AgreementDecl> &out) {
  if (!expect(ctx, n, YAML::NodeType::Sequence, "'agreement' (a list of {metric: node.field, label: field})")) return;
  for (const auto &e : n) {
    if (!expect(ctx, e, YAML::NodeType::Map, "an 'agreement' entry ({metric: judge.verdict, label: faithful})"))
      continue;
    check_keys(ctx, e, {"metric", "label", "positive", "name"}, "an 'agreement' entry");
    AgreementDecl d;
    d.at = d.metric_at = d.label_at = ctx.at(e);
    if (auto m = e["metric"]) {
      d.metric_at = ctx.at(m);
      parse_metric(ctx, m, "agreement metric", d.metric, d.node, d.path);
    } else {
      ctx.error(e, "an 'agreement' entry needs metric: node.field (the output compared with the label)");
    }
    if (auto l = e["label"]) {
      d.label = scalar(ctx, l, "agreement 'label'");
      d.label_at = ctx.at(l);
    } else {
      ctx.error(e, "an 'agreement' entry needs label: (a field of labels.fields)");
    }
    if (auto p = e["positive"]) {
      d.positive = to_json(ctx, p, nullptr, "");
      if (!d.positive.is_primitive() || d.positive.is_null())
        ctx.error(p, "agreement 'positive' is one value: the label value that counts as positive (e.g. true)");
    }
    if (auto nm = e["name"]) d.name = scalar(ctx, nm, "agreement 'name'");
    out.push_back(std::move(d));
  }
}

}  // namespace config_detail
}  // namespace evalgraph
