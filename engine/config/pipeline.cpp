#include "config/pipeline.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "config/yaml_guard.h"
#include "config/yaml_parse.h"
#include "llm/llm_service.h"

namespace evalgraph {
namespace fs = std::filesystem;
using nlohmann::json;

using namespace config_detail;

namespace {

bool valid_id(const std::string &id) {
  if (id.empty()) return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// A size in bytes: a whole number, or one with a unit: 512 KB, 1 MB, 2 GB (KB/MB/GB and KiB/MiB/GiB are all
// powers of 1024). False when it is neither.
bool parse_size(const std::string &text, std::size_t &out) {
  std::string s;
  for (char c : text)
    if (c != ' ' && c != '_' && c != ',') s.push_back(c);
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i > 15) return false;
  std::size_t n = std::stoull(s.substr(0, i));
  std::string unit = s.substr(i);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::size_t mul = 1;
  if (unit.empty() || unit == "b" || unit == "bytes") mul = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") mul = std::size_t{1} << 10;
  else if (unit == "m" || unit == "mb" || unit == "mib") mul = std::size_t{1} << 20;
  else if (unit == "g" || unit == "gb" || unit == "gib") mul = std::size_t{1} << 30;
  else return false;
  if (n > (std::size_t{1} << 40) / mul) return false;  // beyond 1 TiB: surely a typo
  out = n * mul;
  return true;
}

// `limits:` — what one record may hold (docs/concepts.md "Limits and hostile data").
void parse_limits(Ctx &ctx, const YAML::Node &l, LimitsDecl &out) {
  out.where = ctx.at(l);
  if (!expect(ctx, l, YAML::NodeType::Map, "'limits'")) return;
  check_keys(ctx, l, {"field_bytes", "record_bytes", "array_items", "nesting_depth", "sentences_per_answer"},
             "'limits'");
  auto size = [&](const char *key, std::size_t &dst) {
    auto n = l[key];
    if (!n) return;
    std::size_t v = 0;
    if (!n.IsScalar() || !parse_size(n.Scalar(), v) || v == 0) {
      ctx.error(n, fmt::format("limits.{} must be a size in bytes above 0, e.g. 1048576, 512 KB, 1 MB or 2 GB", key));
      return;
    }
    dst = v;
  };
  auto count = [&](const char *key, std::size_t lo, std::size_t hi, std::size_t &dst) {
    auto n = l[key];
    if (!n) return;
    json v = n.IsScalar() ? scalar_to_json(n) : json();
    if (!v.is_number_integer() || v.get<long long>() < static_cast<long long>(lo) ||
        static_cast<unsigned long long>(v.get<long long>()) > hi) {
      ctx.error(n, fmt::format("limits.{} must be a whole number from {} to {}", key, lo, hi));
      return;
    }
    dst = static_cast<std::size_t>(v.get<long long>());
  };
  size("field_bytes", out.record.field_bytes);
  size("record_bytes", out.record.record_bytes);
  count("array_items", 1, std::size_t{1} << 40, out.record.array_items);
  std::size_t depth = static_cast<std::size_t>(out.record.nesting_depth);
  count("nesting_depth", 1, static_cast<std::size_t>(rawjson::kMaxDepth), depth);
  out.record.nesting_depth = static_cast<int>(depth);
  count("sentences_per_answer", 1, std::size_t{1} << 40, out.sentences_per_answer);
  if ((l["field_bytes"] || l["record_bytes"]) && out.record.field_bytes > out.record.record_bytes)
    ctx.error(l["field_bytes"] ? l["field_bytes"] : l["record_bytes"], fmt::format("limits.field_bytes ({}) is above limits.record_bytes ({}); a field is part of a record",
                             out.record.field_bytes, out.record.record_bytes));
}

NodeDecl parse_node(Ctx &ctx, const YAML::Node &n, bool sink, size_t index) {
  NodeDecl d;
  d.is_sink = sink;
  d.where = ctx.at(n);
  const std::string what = sink ? "a sink" : "a node";
  if (!expect(ctx, n, YAML::NodeType::Map, fmt::format("{} (entry #{})", what, index + 1))) return d;
  check_keys(ctx, n, {"id", "uses", "with", "inputs", "needs", "group_by", "order_by", "description"}, what);
  if (auto id = n["id"]) {
    d.id = scalar(ctx, id, "id");
    if (!d.id.empty() && !valid_id(d.id))
      ctx.error(id, fmt::format("id '{}' may hold only letters, digits, '_' and '-'", d.id));
  } else if (!sink) {
    ctx.error(n, fmt::format("node #{} has no 'id'; give every node a unique id", index + 1));
  }
  if (auto uses = n["uses"]) {
    d.uses = scalar(ctx, uses, "uses");
    d.uses_where = ctx.at(uses);
  } else {
    ctx.error(n, fmt::format("{} '{}' has no 'uses' (the node type, e.g. ksodi.s0; `evalgraph plugins` lists them)",
                             what, d.id.empty() ? "#" + std::to_string(index + 1) : d.id));
  }
  if (sink && d.id.empty()) d.id = d.uses.empty() ? "sink" + std::to_string(index + 1) : d.uses;
  if (auto with = n["with"]) {
    if (with.IsMap()) d.with = to_json(ctx, with, &d.with_locations, "");
    else if (!with.IsNull()) ctx.error(with, "'with' must be a mapping of parameters");
  }
  if (auto inputs = n["inputs"]) {
    if (expect(ctx, inputs, YAML::NodeType::Map, "'inputs' (port: record field)")) {
      for (const auto &kv : inputs) {
        d.inputs[kv.first.Scalar()] = scalar(ctx, kv.second, "an input field");
        d.input_locations[kv.first.Scalar()] = ctx.at(kv.first);
      }
    }
  }
  if (auto needs = n["needs"]) {
    if (needs.IsScalar()) {
      d.needs.push_back(needs.Scalar());
      d.needs_locations.push_back(ctx.at(needs));
    } else if (expect(ctx, needs, YAML::NodeType::Sequence, "'needs' (a node id or a list of them)")) {
      for (const auto &x : needs) {
        d.needs.push_back(scalar(ctx, x, "a needs entry"));
        d.needs_locations.push_back(ctx.at(x));
      }
    }
  }
  if (auto g = n["group_by"]) {
    d.group_by = scalar(ctx, g, "group_by");
    d.group_by_where = ctx.at(g);
  }
  if (auto o = n["order_by"]) d.order_by = scalar(ctx, o, "order_by");
  return d;
}

// The trace reader's keys of `dataset:` (format: otlp, docs/traces.md): `logs:` (a second file, relative to the
// pipeline file), `unit: trace | llm_call`, and `mapping:` (record field: attribute name(s), or the span name
// patterns llm_spans/retriever_spans/tool_spans). They travel to the reader as options.
void parse_trace_keys(Ctx &ctx, const YAML::Node &ds, const fs::path &base, DatasetDecl &out) {
  const bool otlp = out.format == "otlp";
  for (const char *key : {"logs", "unit", "mapping"}) {
    YAML::Node n = ds[key];
    if (!n) continue;
    if (!otlp) {
      ctx.error(n, fmt::format("dataset '{}' is a key of trace files; add format: otlp (docs/traces.md)", key));
      continue;
    }
    if (std::string(key) == "logs") {
      std::string s = scalar(ctx, n, "dataset logs");
      out.options["logs"] = (fs::path(s).is_absolute() ? fs::path(s) : base / s).lexically_normal().string();
    } else if (std::string(key) == "unit") {
      std::string s = scalar(ctx, n, "dataset unit");
      if (s != "trace" && s != "llm_call")
        ctx.error(n, fmt::format("unknown unit '{}'; use trace (a record per trace) or llm_call (a record per LLM call){}", s,
                                 did_you_mean(s, {"trace", "llm_call"})));
      out.options["unit"] = s;
    } else if (expect(ctx, n, YAML::NodeType::Map, "dataset 'mapping'")) {
      for (const auto &kv : n) {
        const YAML::Node &v = kv.second;
        const bool names = v.IsScalar() || (v.IsSequence() && std::all_of(v.begin(), v.end(), [](const YAML::Node &x) {
                                               return x.IsScalar();
                                             }));
        const bool attribute = v.IsMap() && v["attribute"] && v.size() == 1;
        if (!names && !attribute)
          ctx.error(v, fmt::format("mapping '{}' must be an attribute name, a list of names, or {{attribute: name}}",
                                   kv.first.Scalar()));
      }
      out.options["mapping"] = to_json(ctx, n, nullptr, "");
    }
  }
}

// `dataset:` — path (relative to the pipeline file), format, reader options and a record limit.
void parse_dataset(Ctx &ctx, const YAML::Node &ds, const fs::path &base, DatasetDecl &out) {
  check_keys(ctx, ds, {"path", "format", "options", "limit", "logs", "unit", "mapping"}, "'dataset'");
  out.where = ctx.at(ds);
  if (auto path = ds["path"]) {
    std::string s = scalar(ctx, path, "dataset path");
    out.path = (fs::path(s).is_absolute() ? fs::path(s) : base / s).lexically_normal();
    out.path_where = ctx.at(path);
  } else {
    ctx.error(ds, "'dataset' needs a 'path' (relative to the pipeline file)");
  }
  if (auto f = ds["format"]) {
    out.format = scalar(ctx, f, "dataset format");
    if (out.format != "csv" && out.format != "jsonl" && out.format != "otlp")
      ctx.error(f, fmt::format("unknown dataset format '{}'; use csv, jsonl or otlp{}", out.format,
                               did_you_mean(out.format, {"csv", "jsonl", "otlp"})));
  }
  if (auto o = ds["options"]; o && expect(ctx, o, YAML::NodeType::Map, "dataset 'options'"))
    out.options = to_json(ctx, o, nullptr, "");
  if (auto l = ds["limit"]) {
    json v = to_json(ctx, l, nullptr, "");
    if (!v.is_number_integer() || v.get<long long>() < 0) ctx.error(l, "dataset 'limit' must be a whole number >= 0");
    else out.limit = v.get<long long>();
  }
  parse_trace_keys(ctx, ds, base, out);
}

// One entry of `providers:`; false when it is no mapping.
bool parse_provider(Ctx &ctx, const YAML::Node &key, const YAML::Node &value, ProviderDecl &d, bool &is_default) {
  d.name = key.Scalar();
  d.where = ctx.at(key);
  if (!value.IsMap()) {
    ctx.error(value, fmt::format("provider '{}' must be a mapping (base_url, model, api_key_env, ...)", d.name));
    return false;
  }
  d.config = to_json(ctx, value, &d.locations, "");
  // ${VAR} and ${VAR:-default} in provider settings, so one pipeline serves any server. Keys stay out:
  // use api_key_env / api_key_file, which the host never writes anywhere.
  std::string why;
  if (!expand_env(d.config, why)) ctx.error(key, fmt::format("provider '{}': {}", d.name, why));
  is_default = d.config.value("default", false);
  d.config.erase("default");
  if (auto pr = d.config.find("price"); pr != d.config.end()) {  // checked here too, so that validate sees it
    try {
      llm::price_from_json(d.name, *pr);
    } catch (const llm::ProviderConfigError &e) {
      ctx.diags.push_back({d.at(e.pointer), e.what()});
    }
  }
  return true;
}

// `providers: {name: settings}`; the default is the one marked `default: true`, else the first.
void parse_providers(Ctx &ctx, const YAML::Node &prov, Pipeline &p) {
  for (const auto &kv : prov) {
    ProviderDecl d;
    bool is_default = false;
    if (!parse_provider(ctx, kv.first, kv.second, d, is_default)) continue;
    if (is_default) p.default_provider = d.name;
    p.providers.push_back(std::move(d));
  }
  if (p.default_provider.empty() && !p.providers.empty()) p.default_provider = p.providers.front().name;
}

// `budget: {max_cost_usd: USD}`.
void parse_budget(Ctx &ctx, const YAML::Node &b, BudgetDecl &out) {
  check_keys(ctx, b, {"max_cost_usd"}, "'budget'");
  out.where = ctx.at(b);
  if (auto m = b["max_cost_usd"]) {
    json v = to_json(ctx, m, nullptr, "");
    if (!v.is_number() || !(v.get<double>() > 0) || !(v.get<double>() < 1e12))
      ctx.error(m, "budget 'max_cost_usd' must be a number of US dollars > 0, e.g. {max_cost_usd: 20}");
    else out.max_cost_usd = v.get<double>();
  } else {
    ctx.error(b, "'budget' needs 'max_cost_usd' (US dollars), e.g. budget: {max_cost_usd: 20}");
  }
}

// `embeddings: provider` or `{provider: name}`: tfidf (the default, kept as "") or a declared provider.
void parse_embeddings(Ctx &ctx, const YAML::Node &e, Pipeline &p) {
  p.embedding_where = ctx.at(e);
  if (e.IsScalar()) {
    p.embedding_provider = e.Scalar();
  } else if (expect(ctx, e, YAML::NodeType::Map, "'embeddings'")) {
    check_keys(ctx, e, {"provider"}, "'embeddings'");
    if (auto pr = e["provider"]) p.embedding_provider = scalar(ctx, pr, "embeddings provider");
  }
  if (p.embedding_provider == "tfidf") p.embedding_provider.clear();
  if (p.embedding_provider.empty()) return;
  bool found = false;
  std::vector<std::string> names{"tfidf"};
  for (const auto &pd : p.providers) {
    names.push_back(pd.name);
    found = found || pd.name == p.embedding_provider;
  }
  if (!found)
    ctx.error(e, fmt::format("embeddings provider '{}' is not declared under 'providers'{}", p.embedding_provider,
                             did_you_mean(p.embedding_provider, names)));
}

// `nodes:` or `sinks:`; ids are unique across both (several sinks of one kind are numbered instead).
void parse_node_list(Ctx &ctx, const YAML::Node &root, const char *key, bool sink, std::set<std::string> &ids,
                     std::vector<NodeDecl> &out) {
  auto list = root[key];
  if (!list) return;
  if (!expect(ctx, list, YAML::NodeType::Sequence, fmt::format("'{}'", key))) return;
  size_t i = 0;
  for (const auto &n : list) {
    NodeDecl d = parse_node(ctx, n, sink, i++);
    if (!d.id.empty() && !ids.insert(d.id).second) {
      if (sink) {  // several sinks of one kind: number them instead of refusing
        int k = 2;
        while (!ids.insert(d.id + "#" + std::to_string(k)).second) ++k;
        d.id += "#" + std::to_string(k);
      } else {
        ctx.error(n["id"], fmt::format("duplicate node id '{}'; ids must be unique", d.id));
      }
    }
    out.push_back(std::move(d));
  }
}

// `output: dir` or `{dir: ...}`, relative to the pipeline file; without it, results/ in the working directory.
fs::path parse_output_dir(Ctx &ctx, const YAML::Node &root, const fs::path &base) {
  auto o = root["output"];
  if (!o) return "results";
  fs::path out_dir = "results";
  if (o.IsScalar()) {
    out_dir = o.Scalar();
  } else if (expect(ctx, o, YAML::NodeType::Map, "'output'")) {
    check_keys(ctx, o, {"dir"}, "'output'");
    if (auto d = o["dir"]) out_dir = scalar(ctx, d, "output dir");
  }
  return (out_dir.is_absolute() ? out_dir : base / out_dir).lexically_normal();
}

}  // namespace

std::string ExpectDecl::label() const {
  if (!name.empty()) return name;
  if (!label_field.empty()) return (metric.empty() ? label_field : metric + "~" + label_field) + " " + stat;
  std::string s = metric + " " + stat;
  if (stat == "share" && !(equals.is_boolean() && equals.get<bool>())) s += " = " + equals.dump();
  for (std::size_t i = 0; i < where.size(); ++i)
    s += (i == 0 ? " where " : ", ") + where[i].first + "=" +
         (where[i].second.is_string() ? where[i].second.get<std::string>() : where[i].second.dump());
  return s;
}

Pipeline parse_pipeline(const std::string &text, const fs::path &file) {
  Ctx ctx{file.string(), {}};
  Pipeline p;
  p.file = file;
  p.source_text = text;
  YAML::Node root = load_yaml_checked(text, ctx.file);  // nesting and alias expansion checked
  p.where = {ctx.file, 1, 1};
  if (!root.IsMap()) throw ConfigError({{{ctx.file, 1, 1}, "a pipeline must be a YAML mapping with name, dataset, nodes and sinks"}});
  check_keys(ctx, root,
             {"name", "description", "dataset", "limits", "replications", "providers", "embeddings", "nodes", "sinks",
              "output", "budget", "expect", "labels", "agreement"},
             "the pipeline");
  const fs::path base = file.has_parent_path() ? file.parent_path() : fs::path(".");

  if (auto n = root["name"]) p.name = scalar(ctx, n, "name");
  if (p.name.empty()) ctx.error(root, "the pipeline needs a 'name' (used in the results folder's name)");
  if (auto n = root["description"]) p.description = scalar(ctx, n, "description");
  if (auto ds = root["dataset"]; !ds) ctx.error(root, "the pipeline needs a 'dataset' with a 'path'");
  else if (expect(ctx, ds, YAML::NodeType::Map, "'dataset'")) parse_dataset(ctx, ds, base, p.dataset);
  if (auto l = root["limits"]) parse_limits(ctx, l, p.limits);
  if (auto r = root["replications"]) {
    json v = to_json(ctx, r, nullptr, "");
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1000)
      ctx.error(r, "'replications' must be a whole number from 1 to 1000");
    else p.replications = static_cast<int>(v.get<long long>());
  }
  if (auto prov = root["providers"]; prov && expect(ctx, prov, YAML::NodeType::Map, "'providers' (name: settings)"))
    parse_providers(ctx, prov, p);
  if (auto b = root["budget"]; b && expect(ctx, b, YAML::NodeType::Map, "'budget' ({max_cost_usd: USD})"))
    parse_budget(ctx, b, p.budget);
  if (auto e = root["expect"]; e && expect(ctx, e, YAML::NodeType::Sequence, "'expect' (a list of {metric, stat, min/max})"))
    for (const auto &item : e) parse_expect(ctx, item, p.expect);
  if (auto e = root["embeddings"]) parse_embeddings(ctx, e, p);
  if (auto l = root["labels"]) parse_labels(ctx, l, base, p.labels);
  if (auto a = root["agreement"]) parse_agreement(ctx, a, p.agreement);

  std::set<std::string> ids;
  parse_node_list(ctx, root, "nodes", false, ids, p.nodes);
  parse_node_list(ctx, root, "sinks", true, ids, p.sinks);
  if (p.nodes.empty() && p.sinks.empty())
    ctx.error(root, "the pipeline has no 'nodes' and no 'sinks'; there is nothing to run");
  p.output_dir = parse_output_dir(ctx, root, base);

  if (!ctx.diags.empty()) throw ConfigError(std::move(ctx.diags));
  return p;
}

Location ProviderDecl::at(const std::string &pointer) const {
  for (std::string p = pointer;;) {
    if (auto it = locations.find(p); it != locations.end() && !p.empty()) return it->second;
    if (auto hash = p.find('#'); hash != std::string::npos) {
      p.erase(hash);
      continue;
    }
    auto slash = p.rfind('/');
    if (slash == std::string::npos || p.empty()) return where;
    p.erase(slash);
  }
}

json LimitsDecl::to_json() const {
  return {{"field_bytes", record.field_bytes},
          {"record_bytes", record.record_bytes},
          {"array_items", record.array_items},
          {"nesting_depth", record.nesting_depth},
          {"sentences_per_answer", sentences_per_answer}};
}

Pipeline load_pipeline(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError({{{file.string(), 0, 0}, "cannot open the pipeline file (does it exist? is it readable?)"}});
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_pipeline(ss.str(), file);
}

}  // namespace evalgraph
