// compression.judge — grades every answer of every method on the rubric criteria of its probe type, blind:
// each answer is judged in a request of its own that carries only the probe question, the answer, the
// compressed context it was given, the ground truth and the criteria — no method id, label, slot or probe
// id — and the requests of a checkpoint are sent in a seeded random order. The glue: what a probe is graded on
// and how a judge answer is recorded are in judging.cpp.
#include <set>

#include "compression/llm_params.hpp"
#include "compression/llm_util.hpp"
#include "compression/rubric.hpp"
#include "evalgraph/plugin.hpp"
#include "judging.hpp"

namespace {
using namespace compression;

constexpr int kSlots = 8;

struct Config : LlmRequest {
  long long seed = 1;
  json criteria_by_probe_type = json::object();
  std::map<std::string, double> criterion_weights;
  bool ground_truth = true;
};
json criteria_list(const std::string &type) {
  return {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}, {"description", "Criteria graded for " + type + " probes"},
          {"default", default_criteria_by_type()[type]}};
}
const evalgraph::Params<Config> kParams{"", llm_request_params(), {
  evalgraph::param<Config>(&Config::seed, "seed", "Seed of the order in which a checkpoint's answers are sent"),
  evalgraph::param<Config>(&Config::criteria_by_probe_type, "criteria_by_probe_type", "Criteria graded per probe type (types not given keep the default)")
      .with_schema({{"type", "object"}, {"additionalProperties", false}, {"properties", {{"recall", criteria_list("recall")}, {"artifact", criteria_list("artifact")}, {"continuation", criteria_list("continuation")}, {"decision", criteria_list("decision")}}}}).shown_default(default_criteria_by_type()),
  evalgraph::param<Config>(&Config::criterion_weights, "criterion_weights", "Weight of a criterion within its dimension (absent: 1)").with_schema({{"additionalProperties", {{"type", "number"}, {"minimum", 0}}}}),
  evalgraph::param<Config>(&Config::ground_truth, "ground_truth", "Send the probe's expected answer as ground_truth"),
}};

// A DOM: `probes` and the answers_N are other nodes' nested outputs, read whole and partly passed on.
class Judge : public evalgraph::Node {
 public:
  Judge(const evalgraph::Host &h, const json &p)
      : host_(h), c_(kParams.parse(p)), by_type_(criteria_by_type(c_.criteria_by_probe_type)) {
    for (const auto &w : c_.criterion_weights) check_criterion(w.first, "criterion_weights");
  }

  json process(evalgraph::Call &call, const json &in) override {
    const json &pr = in.at("probes");
    const json &probes = pr.is_object() && pr.contains("probes") ? pr["probes"] : pr;
    if (!probes.is_array()) throw evalgraph::InputError("'probes' must be the probe node's output or an array of probes");

    struct Item {
      std::size_t probe, slot_pos;
      std::string answer;
      std::vector<std::string> crit;
      json result;
    };
    struct Slot {
      int slot;
      const json *out;
    };
    std::vector<Slot> slots;
    for (int s = 1; s <= kSlots; ++s) {
      auto it = in.find("answers_" + std::to_string(s));
      if (it == in.end() || it->is_null()) continue;
      if (!it->is_object() || !it->contains("answers") || !(*it)["answers"].is_array())
        throw evalgraph::InputError("answers_" + std::to_string(s) + " is not a compression.answer output");
      slots.push_back({s, &*it});
    }
    if (slots.empty()) throw evalgraph::InputError("no answers: map answers_1.. to compression.answer nodes");

    json methods = json::array();
    for (const auto &s : slots)
      methods.push_back({{"slot", s.slot},
                         {"method", s.out->value("method", "")},
                         {"label", s.out->value("label", "")},
                         {"tokens_kept", s.out->value("tokens_kept", json())},
                         {"tokens_history", s.out->value("tokens_history", json())}});

    std::vector<Item> items;
    for (std::size_t pi = 0; pi < probes.size(); ++pi) {
      const json &p = probes[pi];
      std::string id = p.value("id", std::to_string(pi + 1)), type = p.value("type", "");
      std::vector<std::string> crit;
      try {
        crit = probe_criteria(p, id, type, by_type_);
      } catch (const std::invalid_argument &e) {
        throw evalgraph::InputError(e.what());
      }
      for (std::size_t si = 0; si < slots.size(); ++si) {
        const json &answers = (*slots[si].out)["answers"];
        const json *a = nullptr;
        for (const auto &x : answers)
          if (x.value("probe_id", "") == id) a = &x;
        Item item{pi, si, "", crit, json::object()};
        item.result = {{"probe_id", id},
                       {"probe_type", type},
                       {"slot", slots[si].slot},
                       {"method", slots[si].out->value("method", "")},
                       {"label", slots[si].out->value("label", "")}};
        if (a == nullptr || !(*a).contains("answer") || !(*a)["answer"].is_string()) {
          item.result["status"] = "unanswered";
          item.result["error"] = a == nullptr ? std::string("no answer for this probe") : a->value("error", std::string("no answer"));
        } else {
          item.answer = (*a)["answer"].get<std::string>();
        }
        items.push_back(std::move(item));
      }
    }

    // Judge the answered items in a seeded random order, one request each.
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < items.size(); ++i)
      if (!items[i].result.contains("status")) todo.push_back(i);
    std::vector<std::size_t> perm = seeded_permutation(todo.size(), checkpoint_seed(in, static_cast<std::uint64_t>(c_.seed)));
    json requests = json::array();
    const std::string system = judge_system_prompt();
    for (std::size_t k = 0; k < perm.size(); ++k) {
      Item &it = items[todo[perm[k]]];
      const json &p = probes[it.probe];
      json input = judge_input(p.value("question", ""), it.answer, (*slots[it.slot_pos].out).value("compacted_context", ""),
                               c_.ground_truth ? p.value("expected", "") : std::string(), it.crit);
      requests.push_back(chat_request(system, input.dump(2), c_.temperature, c_.max_tokens));
      it.result["order"] = k;
    }
    long invalid = 0, errors = 0, valid = 0, unanswered = static_cast<long>(items.size() - todo.size());
    const std::vector<BatchAnswer> res = chat_batch_texts(host_, call, c_.provider, requests);
    for (std::size_t k = 0; k < perm.size(); ++k) {
      Item &it = items[todo[perm[k]]];
      json &r = it.result;
      if (!res[k].ok) {
        r["error"] = res[k].text;
        r["status"] = "judge_error";
        ++errors;
        continue;
      }
      const std::string &text = res[k].text;
      r["raw"] = text;
      Judgement J = parse_judgement(text, it.crit, c_.criterion_weights);
      r["criteria"] = it.crit;
      if (write_judgement(r, J)) ++valid;
      else ++invalid;
    }
    json results = json::array();
    for (auto &it : items) results.push_back(std::move(it.result));
    return {{"results", results},   {"methods", methods}, {"judge_calls", requests.size()}, {"valid", valid},
            {"invalid", invalid},   {"judge_errors", errors}, {"unanswered", unanswered}};
  }

 private:
  evalgraph::Host host_;
  const Config c_;
  const CriteriaByType by_type_;
};

}  // namespace

EVALGRAPH_PLUGIN("compression_rubric", "1.0.0", "Context compression: blind rubric judge",
                 evalgraph::node_type<Judge>({EG_KIND_JUDGE, "compression.judge",
                                              "grades each method's probe answers 0-5 on the rubric criteria, blind to the method",
                                              kParams.schema(), {"probes"},
                                              {"answers_1", "answers_2", "answers_3", "answers_4", "answers_5", "answers_6",
                                               "answers_7", "answers_8"},
                                              {"results", "methods", "judge_calls", "valid", "invalid", "judge_errors", "unanswered"},
                                              EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM}))
