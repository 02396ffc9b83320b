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

class Probes : public evalgraph::Node {
 public:
  Probes(const evalgraph::Host &h, const json &p) : host_(h) {
    const Config c = kParams.parse(p);
    types_ = {c.types.begin(), c.types.end()};
    decision_n_ = c.decision_probes;
    only_supplied_ = c.supplied == "only";
    max_tool_chars_ = c.max_tool_chars;
    provider_ = c.provider;
    temperature_ = c.temperature;
    max_tokens_ = c.max_tokens;
  }

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
      bool generate = !(only_supplied_ && supplied.is_array() && !supplied.empty());
      Facts f = extract_facts(msgs, 0, msgs.size());
      if (generate) {
        probes = extracted_probes(f, types_);
        if (types_.count("decision") && decision_n_ > 0) {
          need_llm.push_back(out.size());
          requests.push_back(chat_request(kDecisionSystem,
                                          decision_prompt(decision_n_, render_transcript(msgs, 0, msgs.size(), max_tool_chars_)),
                                          temperature_, max_tokens_));
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
    if (!requests.empty()) {
      json res = host_.chat_batch(call, requests, provider_.empty() ? nullptr : provider_.c_str());
      if (!res.is_array() || res.size() != requests.size())
        throw std::runtime_error("chat_batch returned " + std::to_string(res.is_array() ? res.size() : 0) + " answers for " +
                                 std::to_string(requests.size()) + " requests");
      for (std::size_t i = 0; i < need_llm.size(); ++i) {
        json &o = out[need_llm[i]];
        const json &item = res[i];
        if (!item.value("ok", false)) {
          // The host already retried; a failed call is an error of this node, not a silently missing probe.
          throw std::runtime_error("decision probes: LLM call failed: " + item.value("error", std::string("?")));
        }
        std::string text = chat_content(item["response"]);
        auto decisions = parse_decisions(text);
        if (!decisions) {
          o["decision_errors"] = 1;
          o["decision_raw"] = text;
          continue;
        }
        insert_decision_probes(o["probes"], *decisions, decision_n_);
      }
    }
    return out;
  }

 private:
  evalgraph::Host host_;
  std::set<std::string> types_;
  long long decision_n_ = 1;
  bool only_supplied_ = false;
  std::size_t max_tool_chars_ = 300;
  std::string provider_;
  double temperature_ = 0;
  int max_tokens_ = 0;
};

}  // namespace

EVALGRAPH_PLUGIN("compression_probes", "1.0.0", "Context compression: probes per checkpoint",
                 evalgraph::node_type<Probes>({EG_KIND_OPERATOR, "compression.probes",
                                               "recall / artifact / continuation probes extracted from the tool calls, decision probes by an LLM, supplied probes",
                                               kParams.schema(), {"messages"}, {"probes"},
                                               {"probes", "messages_total", "tokens_history", "decision_errors", "decision_raw", "facts"},
                                               EG_FLAG_SEQUENCE | EG_FLAG_USES_LLM}))
