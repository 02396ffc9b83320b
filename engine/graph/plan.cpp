#include "graph/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <functional>
#include <queue>
#include <set>

#include "config/json_schema.h"
#include "io/dataset.h"
#include "util/raw_json.h"
#include "expect/expectations.h"

namespace evalgraph {
namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> read_dataset_columns(const Pipeline &p) {
  try {
    auto reader = io::open_dataset(p.dataset.path, p.dataset.format, p.dataset.options, p.limits.record);
    std::vector<std::string> cols = reader->columns();
    if (!cols.empty()) return cols;  // CSV: the header says it all
    // JSONL records need not all carry the same keys: take the union over the first records.
    std::string text;
    if (!reader->next_text(text)) return cols;
    cols = reader->columns();  // the first record's keys in file order
    std::set<std::string> seen(cols.begin(), cols.end());
    std::vector<rawjson::Member> members;  // the keys, from the reader's own check of each line
    for (int i = 0; i < 1000 && reader->next_text(text, &members); ++i) {
      if (!reader->record_problem().empty()) continue;  // a record over a limit fails alone; its keys are no columns
      for (const auto &m : members)
        if (seen.insert(m.key).second) cols.push_back(m.key);
    }
    return cols;
  } catch (const io::DataError &e) {
    throw ConfigError({{p.dataset.path_where, fmt::format("dataset: {}", e.what())}});
  } catch (const std::exception &e) {
    throw ConfigError({{p.dataset.path_where, fmt::format("cannot read the dataset {}: {}", p.dataset.path.string(), e.what())}});
  }
}

namespace {

Location param_location(const NodeDecl &d, const std::string &pointer, bool key) {
  if (key) {
    if (auto it = d.with_locations.find(pointer + "#key"); it != d.with_locations.end()) return it->second;
  }
  if (auto it = d.with_locations.find(pointer); it != d.with_locations.end()) return it->second;
  if (auto it = d.with_locations.find(""); it != d.with_locations.end()) return it->second;
  return d.uses_where;
}

// A node of a type with describe() (ABI 1.2): the plugin says, from the node's own parameters, what this node
// reads, writes and takes. Returns nullptr (with the plugin's messages at their parameters) when it cannot.
std::shared_ptr<NodeTypeInfo> describe_node(const NodeDecl &d, const NodeTypeInfo &t, const Pipeline &p,
                                            const std::vector<std::string> &columns, std::vector<Diagnostic> &diags) {
  json w = d.with.is_object() ? d.with : json::object();
  w["_pipeline_dir"] = std::filesystem::absolute(p.file).parent_path().string();
  json inputs = json::array();
  for (const auto &[port, field] : d.inputs) inputs.push_back(port);
  w["_inputs"] = inputs;
  w["_columns"] = columns;
  const std::string text = w.dump();
  std::string out;
  eg_status st = t.call_describe(text, out);
  json r = json::parse(out, nullptr, false);
  auto report = [&](const std::string &param, const std::string &msg) {
    Location at = param.empty() ? d.uses_where : param_location(d, "/" + param, false);
    diags.push_back({at, fmt::format("node '{}' ({}): {}", d.id, t.name, msg)});
  };
  if (st != EG_OK) {
    if (r.is_object() && r.contains("errors") && r["errors"].is_array() && !r["errors"].empty()) {
      for (const auto &e : r["errors"])
        report(e.value("param", std::string()), e.value("message", std::string("(no message)")));
    } else {
      report("", out.empty() ? "the plugin could not describe this node" : out);
    }
    return nullptr;
  }
  auto names = [&](const char *key, std::vector<std::string> &into) {
    if (!r.contains(key)) return true;
    if (!r[key].is_array()) return false;
    for (const auto &v : r[key]) {
      if (!v.is_string() || !plain_field_name(v.get<std::string>())) return false;
      into.push_back(v.get<std::string>());
    }
    return true;
  };
  auto info = std::make_shared<NodeTypeInfo>(t);
  info->reads.clear();
  info->reads_optional.clear();
  info->writes.clear();
  if (!r.is_object() || !names("reads", info->reads) || !names("reads_optional", info->reads_optional) ||
      !names("writes", info->writes) || (r.contains("flags") && !r["flags"].is_number_unsigned()) ||
      (r.contains("params_schema") && !r["params_schema"].is_object())) {
    report("", fmt::format("the plugin's description of this node is malformed: {}", out.substr(0, 200)));
    return nullptr;
  }
  if (r.contains("flags")) info->flags = r["flags"].get<uint32_t>();
  if (r.contains("params_schema")) info->params_schema = r["params_schema"];
  if (r.contains("outputs")) {
    if (std::string why = check_output_declaration(r["outputs"]); !why.empty()) {
      report("", fmt::format("the plugin's description of this node {}", why));
      return nullptr;
    }
    info->outputs = r["outputs"];
  }
  info->info = r.value("info", json());
  return info;
}

// Finds one cycle in the graph and returns it as "a -> b -> a".
std::string find_cycle(const DagGraph &g, const std::vector<std::string> &names) {
  size_t n = boost::num_vertices(g);
  std::vector<int> color(n, 0);
  std::vector<size_t> stack;
  std::string result;
  std::function<bool(size_t)> dfs = [&](size_t u) {
    color[u] = 1;
    stack.push_back(u);
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      size_t v = boost::target(*e, g);
      if (color[v] == 1) {
        auto it = std::find(stack.begin(), stack.end(), v);
        for (; it != stack.end(); ++it) result += names[*it] + " -> ";
        result += names[v];
        return true;
      }
      if (color[v] == 0 && dfs(v)) return true;
    }
    stack.pop_back();
    color[u] = 2;
    return false;
  };
  for (size_t u = 0; u < n; ++u)
    if (color[u] == 0 && dfs(u)) break;
  return result;
}

// build_plan's steps, in the order it takes them: resolve the node types, link each node to what it needs and
// reads, order the graph, then lay out the plan. Every problem found on the way is kept in `diags`.
struct Builder {
  const Pipeline &p;
  const PluginRegistry &reg;
  Plan &plan;
  std::vector<Diagnostic> diags;
  std::set<std::string> columns;
  std::vector<std::string> ordered_columns;  // as in the dataset, for messages
  std::map<std::string, size_t> index_of;  // node id -> declaration index
  std::vector<const NodeTypeInfo *> types;  // per node, nullptr where it could not be resolved
  std::vector<const NodeTypeInfo *> sink_types;
  std::vector<std::set<size_t>> preds;  // per node: the nodes it runs after
  std::map<std::pair<size_t, size_t>, std::set<std::string>> reasons;  // per edge: the fields (or "needs") behind it
  std::vector<std::vector<PortBinding>> ports;  // per node

  Builder(const Pipeline &pipeline, const PluginRegistry &registry, Plan &out, const std::vector<std::string> &cols)
      : p(pipeline), reg(registry), plan(out), columns(cols.begin(), cols.end()), ordered_columns(cols),
        preds(pipeline.nodes.size()), ports(pipeline.nodes.size()) {
    for (size_t i = 0; i < p.nodes.size(); ++i) index_of[p.nodes[i].id] = i;
  }

  void error(const Location &at, std::string msg) { diags.push_back({at, std::move(msg)}); }

  // Resolves a field for a port; returns false (with a message) when nothing provides it.
  bool resolve(const NodeDecl &d, PortBinding &b, const Location &at,
               bool must, bool allow_nodes = true) {
    const std::string &f = b.field;
    if (columns.count(f) != 0) {
      b.top = f;
      return true;
    }
    size_t dot = f.find('.');
    std::string head = f.substr(0, dot);
    if (auto it = index_of.find(head); allow_nodes && it != index_of.end()) {
      if (head == d.id) {
        if (must) error(at, fmt::format("node '{}' cannot read its own output '{}'", d.id, f));
        return false;
      }
      b.top = head;
      b.sub = dot == std::string::npos ? "" : f.substr(dot + 1);
      const NodeTypeInfo *t = types[it->second];
      if (t != nullptr && !b.sub.empty()) {
        const auto &w = t->writes;
        if (std::find(w.begin(), w.end(), "*") == w.end() && std::find(w.begin(), w.end(), b.sub) == w.end()) {
          if (must)
            error(at, fmt::format("node '{}' ({}) does not write '{}'{}; it writes: {}", head, t->name, b.sub,
                                  did_you_mean(b.sub, w), join_list(w)));
          return false;
        }
      }
      return true;
    }
    if (!must) return false;
    std::vector<std::string> cands(columns.begin(), columns.end());
    for (const auto &[id, i] : index_of) {
      if (types[i] == nullptr || id == d.id) continue;
      for (const auto &w : types[i]->writes) cands.push_back(id + "." + w);
    }
    const std::vector<std::string> &cols = ordered_columns;
    error(at, fmt::format("port '{}' of node '{}' reads field '{}', which neither the dataset nor an upstream node "
                          "provides{}; dataset columns: {}. Map the port to a field with `inputs: {{{}: <field>}}`",
                          b.port, d.id, f, did_you_mean(f, cands), cols.empty() ? "(none)" : join_list(cols), b.port));
    return false;
  }

  void add_edge(size_t from, size_t to, std::string why) {
    preds[to].insert(from);
    reasons[{from, to}].insert(std::move(why));
  }

  // 1. A node's type, its kind checked against where it is listed and its parameters against the type's schema.
  const NodeTypeInfo *resolve_type(const NodeDecl &d, bool sink) {
    if (d.uses.empty()) return nullptr;
    const NodeTypeInfo *t = reg.find(d.uses);
    if (t == nullptr) {
      error(d.uses_where, fmt::format("unknown node type '{}'{}; `evalgraph plugins` lists the loaded ones (add a "
                                      "folder with --plugin-dir or EVALGRAPH_PLUGIN_PATH)",
                                      d.uses, did_you_mean(d.uses, reg.names())));
      return nullptr;
    }
    bool is_sink = t->type->kind == EG_KIND_SINK;
    if (sink && !is_sink) {
      error(d.uses_where, fmt::format("'{}' is not a sink (its kind is {}); move it to 'nodes'", d.uses, kind_name(t->type->kind)));
      return nullptr;
    }
    if (!sink && is_sink) {
      error(d.uses_where, fmt::format("'{}' is a sink; list it under 'sinks', not 'nodes'", d.uses));
      return nullptr;
    }
    if (!sink && t->describe != nullptr) {
      auto described = describe_node(d, *t, p, ordered_columns, diags);
      if (described == nullptr) return nullptr;
      plan.described.push_back(described);
      t = described.get();
    }
    std::vector<SchemaViolation> v;
    validate_json_schema(t->params_schema, d.with, v);
    for (const auto &x : v) {
      bool key = x.message.rfind("unknown parameter", 0) == 0;
      std::string where = x.pointer.empty() ? "" : " at 'with" + x.pointer + "'";
      error(param_location(d, x.pointer, key), fmt::format("node '{}' ({}): parameter{} {}", d.id, d.uses, where, x.message));
    }
    return t;
  }

  // 2a. Edges from `needs`.
  void link_needs(size_t i) {
    const NodeDecl &d = p.nodes[i];
    for (size_t k = 0; k < d.needs.size(); ++k) {
      auto it = index_of.find(d.needs[k]);
      if (it == index_of.end()) {
        std::vector<std::string> ids;
        for (const auto &x : p.nodes) ids.push_back(x.id);
        error(d.needs_locations[k], fmt::format("node '{}' needs '{}', which is not a node id{}", d.id, d.needs[k],
                                                did_you_mean(d.needs[k], ids)));
      } else if (it->second == i) {
        error(d.needs_locations[k], fmt::format("node '{}' needs itself", d.id));
      } else {
        add_edge(it->second, i, "needs");
      }
    }
  }

  // 2b. Every port named under `inputs:` is one the node type has.
  void check_input_ports(const NodeDecl &d, const NodeTypeInfo &t) {
    for (const auto &[port, field] : d.inputs) {
      bool known = std::count(t.reads.begin(), t.reads.end(), port) + std::count(t.reads_optional.begin(), t.reads_optional.end(), port);
      if (!known) {
        std::vector<std::string> all = t.reads;
        all.insert(all.end(), t.reads_optional.begin(), t.reads_optional.end());
        error(d.input_locations.at(port), fmt::format("node '{}' ({}) has no input port '{}'{}; its ports: {}", d.id,
                                                      t.name, port, did_you_mean(port, all), all.empty() ? "(none)" : join_list(all)));
      }
    }
  }

  // 2c. A port bound to the field it reads, and an edge from the node that writes that field.
  void bind_port(size_t i, const std::string &port, bool required) {
    const NodeDecl &d = p.nodes[i];
    PortBinding pb;
    pb.port = port;
    pb.required = required;
    auto it = d.inputs.find(port);
    bool mapped = it != d.inputs.end();
    pb.field = mapped ? it->second : port;
    Location at = mapped ? d.input_locations.at(port) : d.uses_where;
    // An unmapped port reads the dataset column of its own name; node outputs are read only when mapped.
    if (!mapped && columns.count(pb.field) == 0) {
      if (required) resolve(d, pb, at, true, false);  // reports the missing field
      return;
    }
    if (!resolve(d, pb, at, required || mapped)) return;
    if (index_of.count(pb.top) != 0 && columns.count(pb.field) == 0)
      add_edge(index_of[pb.top], i, pb.sub.empty() ? pb.top : pb.sub);
    ports[i].push_back(std::move(pb));
  }

  // 2d. A sequence node's grouping: dataset columns, and the same for every sequence node of the pipeline.
  void check_grouping(const NodeDecl &d, const NodeTypeInfo &t) {
    if (!t.has(EG_FLAG_SEQUENCE)) {
      if (!d.group_by.empty())
        error(d.group_by_where, fmt::format("node '{}' ({}) is not a sequence node; remove group_by/order_by", d.id, t.name));
      return;
    }
    if (d.group_by.empty()) {
      error(d.uses_where, fmt::format("node '{}' ({}) is a sequence node: give `group_by: <conversation id field>` "
                                      "and `order_by: <turn field>`", d.id, t.name));
      return;
    }
    for (const auto &f : {d.group_by, d.order_by}) {
      if (!f.empty() && columns.count(f) == 0)
        error(d.group_by_where, fmt::format("node '{}': group/order field '{}' is not a dataset column{}", d.id, f,
                                            did_you_mean(f, ordered_columns)));
    }
    if (!plan.group_by.empty() && (plan.group_by != d.group_by || plan.order_by != d.order_by))
      error(d.group_by_where, fmt::format("node '{}' groups by '{}'/'{}' but another sequence node groups by "
                                          "'{}'/'{}'; one pipeline uses one grouping",
                                          d.id, d.group_by, d.order_by, plan.group_by, plan.order_by));
    plan.group_by = d.group_by;
    plan.order_by = d.order_by;
  }

  void link_node(size_t i) {
    link_needs(i);
    const NodeTypeInfo *t = types[i];
    if (t == nullptr) return;
    const NodeDecl &d = p.nodes[i];
    check_input_ports(d, *t);
    for (const auto &r : t->reads) bind_port(i, r, true);
    for (const auto &r : t->reads_optional) bind_port(i, r, false);
    check_grouping(d, *t);
  }

  // 3. The Boost graph and the execution order (Kahn's algorithm, ties by declaration); a cycle is an error.
  std::vector<size_t> order_graph() {
    const size_t n = p.nodes.size();
    plan.graph = DagGraph(n);
    for (size_t v = 0; v < n; ++v)
      for (size_t u : preds[v]) {
        boost::add_edge(u, v, plan.graph);
        plan.edge_list.emplace_back(u, v);
        plan.edge_reasons.push_back(join_list({reasons[{u, v}].begin(), reasons[{u, v}].end()}));
      }
    std::vector<size_t> order;
    std::vector<size_t> indeg(n);
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t v = 0; v < n; ++v) {
      indeg[v] = boost::in_degree(v, plan.graph);
      if (indeg[v] == 0) ready.push(v);
    }
    while (!ready.empty()) {
      size_t u = ready.top();
      ready.pop();
      order.push_back(u);
      for (auto [e, end] = boost::out_edges(u, plan.graph); e != end; ++e)
        if (--indeg[boost::target(*e, plan.graph)] == 0) ready.push(boost::target(*e, plan.graph));
    }
    if (order.size() != n) {
      std::vector<std::string> names;
      for (const auto &d : p.nodes) names.push_back(d.id);
      std::string cycle = find_cycle(plan.graph, names);
      std::string first = cycle.substr(0, cycle.find(' '));
      error(p.nodes[index_of[first]].where, fmt::format("the nodes form a cycle: {}; a node may only read from or "
                                                        "need nodes that come before it", cycle));
    }
    return order;
  }

  // 4. The planned nodes in execution order, their upstream nodes as positions in that order; then the sinks.
  void lay_out(const std::vector<size_t> &order) {
    const size_t n = p.nodes.size();
    std::vector<size_t> pos(n);
    for (size_t k = 0; k < n; ++k) pos[order[k]] = k;
    for (size_t i : order) {
      PlannedNode pn;
      pn.decl = &p.nodes[i];
      pn.type = types[i];
      pn.ports = std::move(ports[i]);
      for (size_t u : preds[i]) pn.upstream.push_back(pos[u]);
      std::sort(pn.upstream.begin(), pn.upstream.end());
      plan.nodes.push_back(std::move(pn));
    }
    for (size_t s = 0; s < p.sinks.size(); ++s) {
      PlannedNode pn;
      pn.decl = &p.sinks[s];
      pn.type = sink_types[s];
      plan.sinks.push_back(std::move(pn));
    }
  }
};

}  // namespace

Plan build_plan(const Pipeline &p, const PluginRegistry &reg, const std::vector<std::string> &cols) {
  Plan plan;
  plan.dataset_columns = cols;
  Builder b(p, reg, plan, cols);
  for (const auto &d : p.nodes) b.types.push_back(b.resolve_type(d, false));
  for (const auto &s : p.sinks) b.sink_types.push_back(b.resolve_type(s, true));
  for (size_t i = 0; i < p.nodes.size(); ++i) b.link_node(i);
  std::vector<size_t> order = b.order_graph();
  check_expectations(p, b.types, cols, b.diags);  // expect: against the nodes' declared outputs
  check_agreement(p, b.types, cols, b.diags);     // labels:, agreement: and the gates on them
  if (b.diags.empty()) plan.labels = load_labels(p, {}, b.diags);
  if (!b.diags.empty()) throw ConfigError(std::move(b.diags));
  b.lay_out(order);
  return plan;
}

std::shared_ptr<agree::LabelSet> load_labels(const Pipeline &p, const fs::path &labels_file,
                                             std::vector<Diagnostic> &diags) {
  if (!p.labels.declared) return nullptr;
  auto set = std::make_shared<agree::LabelSet>(p.labels);
  return read_labels(*set, p, labels_file, diags) ? set : nullptr;
}

bool read_labels(agree::LabelSet &set, const Pipeline &p, const fs::path &labels_file,
                 std::vector<Diagnostic> &diags) {
  try {
    if (!labels_file.empty()) set.read_file(labels_file);
    else if (!p.labels.path.empty()) set.read_file(p.labels.path);
    else set.check_dataset(p.dataset, p.limits.record);
  } catch (const ConfigError &e) {
    diags.insert(diags.end(), e.diagnostics().begin(), e.diagnostics().end());
    return false;
  } catch (const io::DataError &e) {
    diags.push_back({{e.file().string(), static_cast<int>(e.line()), static_cast<int>(e.column())}, e.what()});
    return false;
  }
  return true;
}

namespace {
std::string dot_escape(const std::string &s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}
}  // namespace

std::string to_dot(const Pipeline &p, const Plan &plan) {
  std::string s = fmt::format("digraph \"{}\" {{\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n",
                              dot_escape(p.name));
  s += fmt::format("  \"dataset\" [shape=cylinder, label=\"dataset\\n{}\"];\n", dot_escape(p.dataset.path.filename().string()));
  for (const auto &pn : plan.nodes)
    s += fmt::format("  \"{}\" [label=\"{}\\n{} ({})\"];\n", dot_escape(pn.decl->id), dot_escape(pn.decl->id),
                     dot_escape(pn.type->name), kind_name(pn.type->type->kind));
  for (const auto &pn : plan.sinks)
    s += fmt::format("  \"sink:{}\" [shape=note, label=\"{}\\n(sink)\"];\n", dot_escape(pn.decl->id), dot_escape(pn.type->name));
  // Dataset columns feeding each node.
  for (const auto &pn : plan.nodes) {
    std::vector<std::string> fields;  // escaped one by one: the "\n" between them is DOT's line break, not text
    for (const auto &b : pn.ports)
      if (std::find(plan.dataset_columns.begin(), plan.dataset_columns.end(), b.field) != plan.dataset_columns.end())
        fields.push_back(dot_escape(b.field));
    if (!fields.empty() || pn.upstream.empty())
      s += fmt::format("  \"dataset\" -> \"{}\" [label=\"{}\"];\n", dot_escape(pn.decl->id), join_list(fields, "\\n"));
  }
  for (size_t k = 0; k < plan.edge_list.size(); ++k) {
    const auto &[u, v] = plan.edge_list[k];
    s += fmt::format("  \"{}\" -> \"{}\" [label=\"{}\"];\n", dot_escape(p.nodes[u].id), dot_escape(p.nodes[v].id),
                     dot_escape(plan.edge_reasons[k]));
  }
  // Every sink receives every finished record: draw edges from the nodes nothing else depends on.
  std::set<size_t> has_succ;
  for (const auto &pn : plan.nodes)
    for (size_t u : pn.upstream) has_succ.insert(u);
  for (const auto &sk : plan.sinks) {
    bool any = false;
    for (size_t k = 0; k < plan.nodes.size(); ++k)
      if (has_succ.count(k) == 0) {
        s += fmt::format("  \"{}\" -> \"sink:{}\";\n", dot_escape(plan.nodes[k].decl->id), dot_escape(sk.decl->id));
        any = true;
      }
    if (!any) s += fmt::format("  \"dataset\" -> \"sink:{}\";\n", dot_escape(sk.decl->id));
  }
  s += "}\n";
  return s;
}

}  // namespace evalgraph
