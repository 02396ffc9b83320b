// chatbot.score — the weighted mean of a row's criteria (tasks and indices): seed 004's "Score" column.
//
//   Score = Σ wᵢ·vᵢ / Σ wᵢ over the criteria with weight wᵢ > 0
//
// Each criterion arrives on a port c01..c48 (mapped in `inputs:` to a node's output: an object with
// "value", as the judges and indices write, or a plain number). When a weighted criterion has no value (an
// invalid verdict, an undefined index) the Score is null and `missing` names it — a row is never scored as
// if the missing criterion were 0, and never on a silently smaller set of weights.
#include <evalgraph/plugin.hpp>

#include <cstdio>

namespace {

using evalgraph::json;

constexpr int kPorts = 48;

std::vector<std::string> &port_names() {
  static std::vector<std::string> v = [] {
    std::vector<std::string> r;
    for (int i = 1; i <= kPorts; ++i) {
      char b[8];
      std::snprintf(b, sizeof b, "c%02d", i);
      r.emplace_back(b);
    }
    return r;
  }();
  return v;
}
std::vector<const char *> port_ptrs() {
  std::vector<const char *> r;
  for (const auto &s : port_names()) r.push_back(s.c_str());
  return r;
}

struct Criterion {
  std::string port, name;
  double weight = 1;
};
struct Config {
  std::vector<Criterion> criteria;
};
const evalgraph::Params<Criterion> kCriterion{{
  evalgraph::param(&Criterion::port, "port", "The input port that carries the criterion's value (c01..c48)").make_required().with_schema({{"pattern", "^c[0-9][0-9]$"}}),
  evalgraph::param(&Criterion::name, "name", "The criterion's name (in `missing`)").make_required(),
  evalgraph::param(&Criterion::weight, "weight", "Weight of the criterion in the mean").at_least(0),
}};
const evalgraph::Params<Config> kParams{{
  evalgraph::param(&Config::criteria, "criteria", "The criteria and their weights", kCriterion).make_required().with_schema({{"minItems", 1}}),
}};

const evalgraph::NodeSpec kSpec{
    .name = "chatbot.score",
    .description = "weighted mean of the criteria (null when a weighted criterion has no value)",
    .reads_optional = port_ptrs(),
    .writes = {"value", "complete", "missing"},
    .flags = EG_FLAG_THREAD_SAFE,
    .params = kParams};

// A DOM: a criterion arrives as a judge's or an index's whole output object, whose "value" it reads.
class Score : public evalgraph::Node {
 public:
  Score(const evalgraph::Host &, const Config &c) {
    double total = 0;
    for (Criterion k : c.criteria) {
      if (std::find(port_names().begin(), port_names().end(), k.port) == port_names().end())
        throw std::invalid_argument("criterion '" + k.name + "': port " + k.port + " does not exist (c01..c48)");
      total += k.weight;
      crits_.push_back(std::move(k));
    }
    if (total <= 0) throw std::invalid_argument("the weights sum to 0; give at least one criterion a weight > 0");
  }

  json process(evalgraph::Call &, const json &in) override {
    double num = 0, den = 0;
    json missing = json::array();
    for (const auto &c : crits_) {
      if (c.weight <= 0) continue;
      auto it = in.find(c.port);
      const json *v = it == in.end() ? nullptr : &*it;
      if (v != nullptr && v->is_object()) v = v->contains("value") ? &(*v)["value"] : nullptr;
      if (v == nullptr || !v->is_number()) {
        missing.push_back(c.name);
        continue;
      }
      num += c.weight * v->get<double>();
      den += c.weight;
    }
    json out = {{"complete", missing.empty()}, {"missing", missing}};
    out["value"] = missing.empty() && den > 0 ? json(num / den) : json(nullptr);
    return out;
  }

 private:
  std::vector<Criterion> crits_;
};

}  // namespace

EVALGRAPH_PLUGIN("chatbot_score", "Weighted Score of a chatbot evaluation row", evalgraph::node_type<Score>(kSpec))
