// Plugin glue of agent.trajectory: parameters, ports, JSON in. The computation is in trajectory.hpp's files.
#include "evalgraph/plugin.hpp"

#include "trajectory.hpp"

namespace {

using evalgraph::json;

struct Config {
  json expected;  // null: none (the record's `expected` port may bring them)
  std::string order = "in_order";
  std::string match = "equal";
  std::vector<std::string> forbidden;
  std::optional<long long> max_steps;
  bool allow_repeats = true;
};
const evalgraph::Params<Config> kParams{{
    evalgraph::param(&Config::expected, "expected",
                     "The expected calls: a list of {name, arguments?, match?}, or a list of such lists "
                     "(alternatives: any one passes, the best is reported). A record's `expected` port wins")
        .with_schema(trajectory::expected_schema()),
    evalgraph::param(&Config::order, "order",
                     "exact: the same calls in the same order, nothing else; in_order: the expected calls as a "
                     "subsequence, others between allowed; any_order: all expected calls in any order, others "
                     "allowed; subset: every call is an expected one, not all expected needed")
        .one_of({"exact", "in_order", "any_order", "subset"}),
    evalgraph::param(&Config::match, "match",
                     "How arguments compare where a call does not say: equal, subset (expected keys only) or regex "
                     "(subset, every expected text a regex)")
        .one_of({"equal", "subset", "regex"}),
    evalgraph::param(&Config::forbidden, "forbidden", "Tool names that must not be called (a call fails the record)"),
    evalgraph::param(&Config::max_steps, "max_steps", "At most this many calls; null: no limit").nullable().at_least(0),
    evalgraph::param(&Config::allow_repeats, "allow_repeats",
                     "false: a call with the same name and arguments as an earlier one fails the record"),
}};

const evalgraph::NodeSpec kSpec{
    .name = "agent.trajectory",
    .description = "an agent's tool calls against the expected calls: order, arguments, forbidden tools, steps",
    .reads = {"tool_calls"},
    .reads_optional = {"expected"},
    .writes = {{"passed", "boolean"},
               {"precision", "number"},
               {"recall", "number"},
               {"f1", "number"},
               {"steps", "integer"},
               {"matched", "integer"},
               {"expected_calls", "integer"},
               {"matched_alternative", "integer"},
               "first_mismatch",
               "redundant_calls",
               "forbidden_calls",
               "alternatives",
               "assignment",
               "failures",
               "parameters"},
    .flags = EG_FLAG_THREAD_SAFE,
    .params = kParams};

class Trajectory : public evalgraph::Node {
 public:
  Trajectory(const evalgraph::Host &, const Config &c, const json &params) {
    o_.order = trajectory::order_from(c.order);
    o_.match = trajectory::match_from(c.match);
    o_.forbidden = c.forbidden;
    o_.max_steps = c.max_steps;
    o_.allow_repeats = c.allow_repeats;
    o_.nesting_depth = evalgraph::input_limits(params).nesting_depth;
    if (!c.expected.is_null())
      expected_ = trajectory::parse_expected(c.expected, o_.match, "expected", o_.nesting_depth, false);
  }

  // Every problem with a record's data is an InputError: that record's node fails with the place in words.
  json process(evalgraph::Call &, const json &in) override {
    std::vector<trajectory::ActualCall> actual;
    std::optional<trajectory::Expected> own;  // the record's expected calls (port expected)
    try {
      auto calls = in.find("tool_calls");
      actual = trajectory::parse_tool_calls(calls != in.end() ? *calls : json(), o_.nesting_depth, "tool_calls");
    } catch (const std::invalid_argument &err) {
      throw evalgraph::InputError(std::string(kSpec.name) + ": port " + err.what());
    }
    try {
      if (auto e = in.find("expected"); e != in.end() && !e->is_null())
        own = trajectory::parse_expected(*e, o_.match, "expected", o_.nesting_depth, true);
    } catch (const std::invalid_argument &err) {
      throw evalgraph::InputError(std::string(kSpec.name) +
                                  ": port expected (the record's expected calls): " + err.what());
    }
    const trajectory::Expected *expected = own ? &*own : expected_ ? &*expected_ : nullptr;
    try {
      return trajectory::evaluate(expected, actual, o_, own ? "port" : expected_ ? "parameter" : "none");
    } catch (const std::invalid_argument &err) {
      throw evalgraph::InputError(std::string(kSpec.name) + ": " + err.what());
    }
  }

 private:
  trajectory::Options o_;
  std::optional<trajectory::Expected> expected_;
};

}  // namespace

EVALGRAPH_PLUGIN("agent_trajectory", "An agent's tool calls against the expected calls",
                 evalgraph::node_type<Trajectory>(kSpec))
