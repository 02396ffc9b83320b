// compression.probes — the probes of each checkpoint: recall, artifact and continuation probes with
// expected answers read deterministically from the tool calls of the history up to the checkpoint, decision
// probes written by an LLM (why a choice was made, which alternatives were weighed), and probes supplied in
// the dataset. A sequence node: it rebuilds each session's history from its checkpoint records.
#include <set>

#include "compression/llm_params.hpp"
#include "compression/facts.hpp"
#include "compression/llm_util.hpp"
#include "compression/rubric.hpp"
#include "compression/session.hpp"
#include "evalgraph/plugin.hpp"

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

const char *const kRecallErrorQ =
    "What was the exact error message that started this work, and which command produced it? Quote the error "
    "message exactly and answer in at most two sentences.";
const char *const kRecallRequestQ = "What did the user originally ask for in this session? Answer in at most two sentences.";
const char *const kArtifactQ =
    "Which files have been created, modified, or only read so far in this session? For every created or modified "
    "file, say briefly what changed. Answer as a Markdown bullet list with one file per line.";
const char *const kContinuationQ =
    "Where does the work stand and what are the next steps? Name every test that is still failing and every "
    "unfinished task. Answer as a numbered list.";
const char *const kDecisionSuffix = " Answer in at most four sentences and name the alternatives that were considered.";

const char *const kDecisionSystem =
    "You write evaluation questions about the work session of an AI coding agent. You only use what the "
    "transcript says.";

std::string join(const std::vector<std::string> &v, const std::string &sep) {
  std::string s;
  for (const auto &x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string artifact_expected(const Facts &f) {
  auto list = [](const std::vector<const FileFacts *> &fs, bool changes) {
    std::vector<std::string> items;
    for (const auto *x : fs) items.push_back(x->path + (changes && !x->changes.empty() ? " — " + join(x->changes, "; ") : ""));
    return items.empty() ? std::string("none") : join(items, "; ");
  };
  std::vector<const FileFacts *> created, modified, read_only, deleted;
  for (const auto &x : f.files) {
    if (x.deleted) deleted.push_back(&x);
    else if (x.created) created.push_back(&x);
    else if (x.modified) modified.push_back(&x);
    else if (x.read) read_only.push_back(&x);
  }
  std::string s = "Created: " + list(created, true) + ". Modified: " + list(modified, true) +
                  ". Read without changes: " + list(read_only, false) + ".";
  if (!deleted.empty()) s += " Deleted: " + list(deleted, false) + ".";
  return s;
}

std::string continuation_expected(const Facts &f) {
  std::string s;
  if (f.last_test) {
    const CommandRun &t = f.commands[*f.last_test];
    if (t.failed)
      s = "The last test run (`" + t.command + "`) failed" +
          (f.last_test_failures.empty() ? std::string(": ") + error_line(t.output) : ": " + join(f.last_test_failures, "; ")) + ".";
    else
      s = "The last test run (`" + t.command + "`) passed.";
  } else {
    s = "No test has been run yet.";
  }
  auto open = f.open_todos();
  if (f.has_todos) {
    std::vector<std::string> items;
    for (const auto &t : open) items.push_back("[" + t.status + "] " + t.content);
    s += open.empty() ? " Every task of the to-do list is completed." : " Open tasks: " + join(items, "; ") + ".";
  }
  return s;
}

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
        if (types_.count("recall")) {
          if (f.has_error)
            probes.push_back(probe("recall-1", "recall", kRecallErrorQ,
                                   "The command `" + f.first_error_command + "` failed with: " + f.first_error_line, "extracted"));
          else if (!f.first_user_request.empty())
            probes.push_back(probe("recall-1", "recall", kRecallRequestQ, "The user asked: " + truncate_utf8(f.first_user_request, 600),
                                   "extracted"));
        }
        if (types_.count("artifact")) probes.push_back(probe("artifact-1", "artifact", kArtifactQ, artifact_expected(f), "extracted"));
        if (types_.count("continuation"))
          probes.push_back(probe("continuation-1", "continuation", kContinuationQ, continuation_expected(f), "extracted"));
        if (types_.count("decision") && decision_n_ > 0) {
          need_llm.push_back(out.size());
          requests.push_back(chat_request(kDecisionSystem, decision_prompt(render_transcript(msgs, 0, msgs.size(), max_tool_chars_)),
                                          temperature_, max_tokens_));
        }
      }
      if (supplied.is_array()) {
        std::size_t k = 0;
        for (const auto &sp : supplied) probes.push_back(supplied_probe(sp, ++k, where));
      } else if (!supplied.is_null()) {
        throw evalgraph::InputError(where + ": 'probes' must be an array");
      }
      json files_created = json::array(), files_modified = json::array(), files_read = json::array();
      for (const auto &x : f.files) {
        if (x.created) files_created.push_back(x.path);
        else if (x.modified) files_modified.push_back(x.path);
        else if (x.read && !x.deleted) files_read.push_back(x.path);
      }
      out.push_back({{"probes", probes},
                     {"messages_total", msgs.size()},
                     {"tokens_history", transcript_tokens(msgs, 0, msgs.size())},
                     {"decision_errors", 0},
                     {"facts",
                      {{"files_created", files_created},
                       {"files_modified", files_modified},
                       {"files_read", files_read},
                       {"first_error", f.has_error ? json(f.first_error_line) : json(nullptr)},
                       {"open_todos", f.open_todos().size()}}}});
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
        std::size_t k = 0;
        for (const auto &d : *decisions) {
          if (k == static_cast<std::size_t>(decision_n_)) break;
          ++k;
          // Decision probes go before dataset-supplied ones, after the extracted ones.
          json p = probe("decision-" + std::to_string(k), "decision", d.first + kDecisionSuffix, d.second, "llm");
          json &arr = o["probes"];
          std::size_t pos = 0;
          while (pos < arr.size() && arr[pos]["source"] != "dataset") ++pos;
          arr.insert(arr.begin() + static_cast<std::ptrdiff_t>(pos), p);
        }
      }
    }
    return out;
  }

 private:
  static json probe(const std::string &id, const std::string &type, const std::string &q, const std::string &expected,
                    const std::string &source) {
    return {{"id", id}, {"type", type}, {"question", q}, {"expected", expected}, {"source", source}};
  }

  static json supplied_probe(const json &sp, std::size_t k, const std::string &where) {
    if (!sp.is_object() || !sp.contains("question") || !sp["question"].is_string() || !sp.contains("type") ||
        !sp["type"].is_string())
      throw evalgraph::InputError(where + ": supplied probe " + std::to_string(k) + " needs string fields 'type' and 'question'");
    std::string type = sp["type"];
    const auto &pt = probe_types();
    if (std::find(pt.begin(), pt.end(), type) == pt.end())
      throw evalgraph::InputError(where + ": supplied probe " + std::to_string(k) + " has type '" + type +
                                  "'; expected recall, artifact, continuation or decision");
    json p = probe("dataset-" + std::to_string(k), type, sp["question"], sp.value("expected", ""), "dataset");
    if (sp.contains("criteria")) {
      if (!sp["criteria"].is_array()) throw evalgraph::InputError(where + ": supplied probe criteria must be an array");
      for (const auto &c : sp["criteria"])
        if (!c.is_string() || dimension_of(c.get<std::string>()).empty())
          throw evalgraph::InputError(where + ": supplied probe " + std::to_string(k) + " names an unknown criterion " + c.dump());
      p["criteria"] = sp["criteria"];
    }
    return p;
  }

  std::string decision_prompt(const std::string &transcript) const {
    return "Below is the transcript of an AI coding agent's session. Find the " + std::to_string(decision_n_) +
           " most important decision(s) in it for which alternatives were weighed (a library, an approach, a fix, a "
           "design). For each, write a question that asks why the decision was made and which alternatives were "
           "considered, without giving the answer away, and the answer according to the transcript. If the "
           "transcript holds no such decision, return an empty list.\n"
           "Return one JSON object and nothing else: {\"decisions\": [{\"question\": \"...\", \"answer\": \"...\"}]}\n\n"
           "### Transcript\n" +
           transcript;
  }

  static std::optional<std::vector<std::pair<std::string, std::string>>> parse_decisions(const std::string &text) {
    auto j = parse_json_answer(text);
    if (!j || !j->is_object() || !j->contains("decisions") || !(*j)["decisions"].is_array()) return std::nullopt;
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto &d : (*j)["decisions"]) {
      if (!d.is_object() || !d.contains("question") || !d["question"].is_string() || !d.contains("answer") ||
          !d["answer"].is_string())
        return std::nullopt;
      std::string q = trim(d["question"].get<std::string>()), a = trim(d["answer"].get<std::string>());
      if (q.empty() || a.empty()) return std::nullopt;
      out.emplace_back(q, a);
    }
    return out;
  }

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
