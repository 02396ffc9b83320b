#include "summary.hpp"

#include <algorithm>
#include <cstdio>

namespace ksodi {

using nlohmann::json;

void RunningStat::add(double v) {
  if (n == 0) {
    min = max = v;
  } else {
    min = std::min(min, v);
    max = std::max(max, v);
  }
  sum += v;
  ++n;
}

void CappedIds::add(const std::string &id, std::size_t cap) {
  ++total;
  if (ids.size() < cap) ids.push_back(id);
}

namespace {

struct MetricDef {
  int node;  // 0 s0, 1 k0, 2 o0
  const char *name;   // display name
  const char *field;  // field in the node's output
  const char *sub;    // for K0 dimensions: key in context_map
};

const std::vector<MetricDef> &defs() {
  static const std::vector<MetricDef> d{
      {0, "S0", "S0", nullptr},         {0, "S0.F", "F", nullptr},          {0, "S0.G_str", "G_str", nullptr},
      {0, "S0.R_red", "R_red", nullptr}, {1, "K0", "K0", nullptr},           {1, "K0.Z", "context_map", "Z"},
      {1, "K0.R", "context_map", "R"},   {1, "K0.D", "context_map", "D"},    {1, "K0.C", "context_map", "C"},
      {1, "K0.E", "context_map", "E"},   {1, "K0.T", "context_map", "T"},    {2, "O0", "O0", nullptr},
      {2, "O0.A_ret", "A_ret", nullptr}, {2, "O0.T", "T", nullptr},          {2, "O0.U", "U", nullptr}};
  return d;
}

std::string id_text(const json &v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "(no id)";
  return v.dump();
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

std::string md_escape(const std::string &s) {
  std::string o;
  for (char c : s) {
    if (c == '|' || c == '`') o.push_back('\\');
    o.push_back(c == '\n' ? ' ' : c);
  }
  return o;
}

std::string id_list(const CappedIds &c) {
  std::string s;
  for (const auto &id : c.ids) s += (s.empty() ? "" : ", ") + ("`" + md_escape(id) + "`");
  if (c.total > c.ids.size()) s += " … and " + std::to_string(c.total - c.ids.size()) + " more";
  return s;
}

}  // namespace

const std::vector<std::string> &SummaryAggregator::metrics() {
  static const std::vector<std::string> m = [] {
    std::vector<std::string> v;
    for (const auto &d : defs()) v.emplace_back(d.name);
    return v;
  }();
  return m;
}

SummaryAggregator::SummaryAggregator(SummaryConfig cfg) : cfg_(std::move(cfg)) {}

void SummaryAggregator::add(const json &rec) {
  if (!rec.is_object()) return;
  ++records_;
  std::string scope = "(none)";
  if (auto it = rec.find(cfg_.scope_field); it != rec.end() && !it->is_null()) scope = id_text(*it);
  auto [sit, inserted] = scopes_.try_emplace(scope);
  if (inserted) {
    order_.push_back(scope);
    sit->second.stats.resize(defs().size());
  }
  ScopeAgg &a = sit->second;
  ++a.n;
  std::string id = "(no id)";
  if (auto it = rec.find(cfg_.id_field); it != rec.end()) id = id_text(*it);

  const json *nodes[3] = {nullptr, nullptr, nullptr};
  const std::string *names[3] = {&cfg_.s0_node, &cfg_.k0_node, &cfg_.o0_node};
  for (int k = 0; k < 3; ++k)
    if (auto it = rec.find(*names[k]); it != rec.end() && it->is_object()) nodes[k] = &*it;

  for (std::size_t m = 0; m < defs().size(); ++m) {
    const MetricDef &d = defs()[m];
    const json *node = nodes[d.node];
    if (node == nullptr) continue;
    auto f = node->find(d.field);
    if (f == node->end()) continue;
    if (d.sub != nullptr) {
      if (!f->is_object()) continue;
      auto s = f->find(d.sub);
      if (s != f->end() && s->is_boolean()) a.stats[m].add(s->get<bool>() ? 1.0 : 0.0);
    } else if (f->is_number()) {
      a.stats[m].add(f->get<double>());
    }
  }
  if (nodes[1] != nullptr) {
    auto k0 = nodes[1]->find("K0");
    if (k0 != nodes[1]->end() && k0->is_number() && k0->get<double>() < cfg_.k0_threshold) a.not_interpretable.add(id, cfg_.max_ids);
  }
  if (nodes[2] != nullptr) {
    auto o0 = nodes[2]->find("O0");
    if (o0 != nodes[2]->end() && o0->is_null()) a.o0_null.add(id, cfg_.max_ids);
  }
  if (auto e = rec.find("_errors"); e != rec.end() && e->is_object() && !e->empty()) {
    std::string which;
    for (const auto &[node, msg] : e->items()) which += (which.empty() ? "" : ", ") + node;
    a.failed.add(id + " (" + which + ")", cfg_.max_ids);
  }
}

std::string SummaryAggregator::markdown() const {
  std::string o;
  o += "# KSODI-Standard summary\n\n";
  o += "Records: " + std::to_string(records_) + ", context scopes (`" + md_escape(cfg_.scope_field) + "`): " +
       std::to_string(order_.size()) + ".\n\n";
  if (order_.size() > 1) {
    o += "## Warning\n\n";
    o += "The data holds " + std::to_string(order_.size()) +
         " context scopes. Comparisons are valid only within one context_scope_id: compare the scopes below "
         "side by side only as separate setups, never as a ranking of one model.\n\n";
  }
  char thr[32];
  std::snprintf(thr, sizeof thr, "%.2f", cfg_.k0_threshold);
  for (const std::string &scope : order_) {
    const ScopeAgg &a = scopes_.at(scope);
    o += "## Scope `" + md_escape(scope) + "`\n\n";
    o += "- units: " + std::to_string(a.n) + "\n";
    o += "- failed records: " + std::to_string(a.failed.total) + (a.failed.total ? " — " + id_list(a.failed) : "") + "\n";
    o += "- K0 < " + std::string(thr) + " (answer quality not interpretable; do not hold O0/S0 against the model): " +
         std::to_string(a.not_interpretable.total) + (a.not_interpretable.total ? " — " + id_list(a.not_interpretable) : "") + "\n";
    o += "- O0 null (no retrieved docs): " + std::to_string(a.o0_null.total) + (a.o0_null.total ? " — " + id_list(a.o0_null) : "") + "\n\n";
    o += "| metric | n | mean | min | max |\n|---|---:|---:|---:|---:|\n";
    const auto &names = metrics();
    for (std::size_t m = 0; m < names.size(); ++m) {
      const RunningStat &s = a.stats[m];
      if (s.n == 0) {
        o += "| " + names[m] + " | 0 | – | – | – |\n";
      } else {
        o += "| " + names[m] + " | " + std::to_string(s.n) + " | " + num(s.mean()) + " | " + num(s.min) + " | " + num(s.max) + " |\n";
      }
    }
    o += "\nK0.Z … K0.T are the shares of units in which the dimension was detected.\n\n";
  }
  return o;
}

}  // namespace ksodi
