// compression.probes — the probes of each checkpoint: recall, artifact and continuation probes with
// expected answers read deterministically from the tool calls of the history up to the checkpoint, decision
// probes written by an LLM (why a choice was made, which alternatives were weighed), and probes supplied in
// the dataset. A sequence node: it rebuilds each session's history from its checkpoint records. The glue:
// the probes themselves are computed in probes.cpp.
#include <set>

#include "compression/llm_params.hpp"
#include "compression/session.hpp"
#include "evalgraph/plugin.hpp"
#include "probes.hpp"

namespace {
using namespace compression;

struct Config : LlmRequest {
  std::vector<std::string> types{"recall", "artifact", "continuation", "decision"};
  int decision_probes = 1;
  std::string supplied = "add";
  std::size_t max_tool_chars = 300;
};
const evalgraph::Params<Config> kParams{"", llm_request_params(), {
  evalgraph::param<Config>(&Config::types, "types", "Probe types generated").with_schema({{"items", {{"type", "string"}, {"enum", {"recall", "artifact", "continuation", "decision"}}}}}),
  evalgraph::param<Config>(&Config::decision_probes, "decision_probes", "Decision probes asked of the LLM per checkpoint (0: no LLM call)").range(0, 10),
  evalgraph::param<Config>(&Config::supplied, "supplied", "Probes from the dataset's `probes` column: added to the generated ones, or used alone where present").one_of({"add", "only"}),
  evalgraph::param<Config>(&Config::max_tool_chars, "max_tool_chars", "Tool outputs are cut to this many characters in the decision prompt (0 = never)").at_least(0).unit("characters"),
}};

// A DOM: a checkpoint's `messages` (nested tool calls) and `probes` (the dataset's, passed on) are read whole.
class Probes : public evalgraph::Node {
 public:
  Probes(const evalgraph::Host &h, const json &p) : host_(h), c_(kParams.parse(p)), types_(c_.types.begin(), c_.types.end()) {}

  json process(evalgraph::Call &call, const json &record) override {
    return process_sequence(call, json::array({record})).at(0);
  }

  json process_sequence(evalgraph::Call &call, const json &records) override {
    std::vector<Message> msgs;
    json out = json::array();
    std::vector<std::size_t> need_llm;  // positions in out that get decision probes
    json requests = json::array();
    std::size_t n_rec = 0;
    for (const auto &r : records) {
      ++n_rec;
      std::string where = "checkpoint " + std::to_string(n_rec);
      auto it = r.find("messages");
      if (it == r.end()) throw evalgraph::InputError(where + " has no 'messages'");
      try {
        append_messages(msgs, *it, where);
      } catch (const std::invalid_argument &e) {
        throw evalgraph::InputError(e.what());
      }
      json probes = json::array();
      json supplied = r.contains("probes") ? r["probes"] : json();
      bool generate = !(c_.supplied == "only" && supplied.is_array() && !supplied.empty());
      Facts f = extract_facts(msgs, 0, msgs.size());
      if (generate) {
        probes = extracted_probes(f, types_);
        if (types_.count("decision") && c_.decision_probes > 0) {
          need_llm.push_back(out.size());
          requests.push_back(chat_request(kDecisionSystem,
                                          decision_prompt(c_.decision_probes, render_transcript(msgs, 0, msgs.size(), c_.max_tool_chars)),
                                          c_.temperature, c_.max_tokens));
        }
      }
      if (supplied.is_array()) {
        std::size_t k = 0;
        try {
          for (const auto &sp : supplied) probes.push_back(supplied_probe(sp, ++k, where));
        } catch (const std::invalid_argument &e) {
          throw evalgraph::InputError(e.what());
        }
      } else if (!supplied.is_null()) {
        throw evalgraph::InputError(where + ": 'probes' must be an array");
      }
      out.push_back({{"probes", probes},
                     {"messages_total", msgs.size()},
                     {"tokens_history", transcript_tokens(msgs, 0, msgs.size())},
                     {"decision_errors", 0},
                     {"facts", facts_summary(f)}});
    }
    const std::vector<BatchAnswer> res = chat_batch_texts(host_, call, c_.provider, requests);
    for (std::size_t i = 0; i < res.size(); ++i) {
      json &o = out[need_llm[i]];
      // The host already retried; a failed call is an error of this node, not a silently missing probe.
      if (!res[i].ok) throw std::runtime_error("decision probes: LLM call failed: " + res[i].text);
      auto decisions = parse_decisions(res[i].text);
      if (!decisions) {
        o["decision_errors"] = 1;
        o["decision_raw"] = res[i].text;
        continue;
      }
      insert_decision_probes(o["probes"], *decisions, c_.decision_probes);
    }
    return out;
  }

 private:
  evalgraph::Host host_;
  const Config c_;
  const std::set<std::string> types_;
};

}  // namespace

EVALGRAPH_PLUGIN("compression_probes", "1.0.0", "Context compression: probes per checkpoint",
                 evalgraph::node_type<Probes>({EG_KIND_OPERATOR, "compression.probes",
                                               "recall / artifact / continuation probes extracted from the tool calls, decision probes by an LLM, supplied probes",
                                               kParams.schema(), {"messages"}, {"probes"},
                                               {"probes", "messages_total", "tokens_history", "decision_errors", "decision_raw", "facts"},
                                               EG_FLAG_SEQUENCE | EG_FLAG_USES_LLM}))
