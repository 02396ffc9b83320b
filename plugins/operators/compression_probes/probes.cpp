// The probes of one checkpoint: see probes.hpp.
#include "probes.hpp"

#include <algorithm>
#include <stdexcept>

#include "compression/rubric.hpp"
#include "compression/session.hpp"

namespace compression {

namespace {
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

std::string join(const std::vector<std::string> &v, const std::string &sep) {
  std::string s;
  for (const auto &x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}
}  // namespace

const char *const kDecisionSystem =
    "You write evaluation questions about the work session of an AI coding agent. You only use what the "
    "transcript says.";

json probe(const std::string &id, const std::string &type, const std::string &q, const std::string &expected,
           const std::string &source) {
  return {{"id", id}, {"type", type}, {"question", q}, {"expected", expected}, {"source", source}};
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

json extracted_probes(const Facts &f, const std::set<std::string> &types) {
  json probes = json::array();
  if (types.count("recall")) {
    if (f.has_error)
      probes.push_back(probe("recall-1", "recall", kRecallErrorQ,
                             "The command `" + f.first_error_command + "` failed with: " + f.first_error_line, "extracted"));
    else if (!f.first_user_request.empty())
      probes.push_back(probe("recall-1", "recall", kRecallRequestQ, "The user asked: " + truncate_utf8(f.first_user_request, 600),
                             "extracted"));
  }
  if (types.count("artifact")) probes.push_back(probe("artifact-1", "artifact", kArtifactQ, artifact_expected(f), "extracted"));
  if (types.count("continuation"))
    probes.push_back(probe("continuation-1", "continuation", kContinuationQ, continuation_expected(f), "extracted"));
  return probes;
}

json supplied_probe(const json &sp, std::size_t k, const std::string &where) {
  if (!sp.is_object() || !sp.contains("question") || !sp["question"].is_string() || !sp.contains("type") ||
      !sp["type"].is_string())
    throw std::invalid_argument(where + ": supplied probe " + std::to_string(k) + " needs string fields 'type' and 'question'");
  std::string type = sp["type"];
  const auto &pt = probe_types();
  if (std::find(pt.begin(), pt.end(), type) == pt.end())
    throw std::invalid_argument(where + ": supplied probe " + std::to_string(k) + " has type '" + type +
                                "'; expected recall, artifact, continuation or decision");
  json p = probe("dataset-" + std::to_string(k), type, sp["question"], sp.value("expected", ""), "dataset");
  if (sp.contains("criteria")) {
    if (!sp["criteria"].is_array()) throw std::invalid_argument(where + ": supplied probe criteria must be an array");
    for (const auto &c : sp["criteria"])
      if (!c.is_string() || dimension_of(c.get<std::string>()).empty())
        throw std::invalid_argument(where + ": supplied probe " + std::to_string(k) + " names an unknown criterion " + c.dump());
    p["criteria"] = sp["criteria"];
  }
  return p;
}

json facts_summary(const Facts &f) {
  json files_created = json::array(), files_modified = json::array(), files_read = json::array();
  for (const auto &x : f.files) {
    if (x.created) files_created.push_back(x.path);
    else if (x.modified) files_modified.push_back(x.path);
    else if (x.read && !x.deleted) files_read.push_back(x.path);
  }
  return {{"files_created", files_created},
          {"files_modified", files_modified},
          {"files_read", files_read},
          {"first_error", f.has_error ? json(f.first_error_line) : json(nullptr)},
          {"open_todos", f.open_todos().size()}};
}

std::string decision_prompt(long long n, const std::string &transcript) {
  return "Below is the transcript of an AI coding agent's session. Find the " + std::to_string(n) +
         " most important decision(s) in it for which alternatives were weighed (a library, an approach, a fix, a "
         "design). For each, write a question that asks why the decision was made and which alternatives were "
         "considered, without giving the answer away, and the answer according to the transcript. If the "
         "transcript holds no such decision, return an empty list.\n"
         "Return one JSON object and nothing else: {\"decisions\": [{\"question\": \"...\", \"answer\": \"...\"}]}\n\n"
         "### Transcript\n" +
         transcript;
}

std::optional<Decisions> parse_decisions(const std::string &text) {
  auto j = parse_json_answer(text);
  if (!j || !j->is_object() || !j->contains("decisions") || !(*j)["decisions"].is_array()) return std::nullopt;
  Decisions out;
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

void insert_decision_probes(json &probes, const Decisions &decisions, long long n) {
  std::size_t k = 0;
  for (const auto &d : decisions) {
    if (k == static_cast<std::size_t>(n)) break;
    ++k;
    // Decision probes go before dataset-supplied ones, after the extracted ones.
    json p = probe("decision-" + std::to_string(k), "decision", d.first + kDecisionSuffix, d.second, "llm");
    std::size_t pos = 0;
    while (pos < probes.size() && probes[pos]["source"] != "dataset") ++pos;
    probes.insert(probes.begin() + static_cast<std::ptrdiff_t>(pos), p);
  }
}

SessionProbes::SessionProbes(const json &records, const ProbeOptions &o) : o_(o) {
  std::vector<Message> msgs;
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
    bool generate = !(o_.only_supplied && supplied.is_array() && !supplied.empty());
    Facts f = extract_facts(msgs, 0, msgs.size());
    if (generate) {
      probes = extracted_probes(f, o_.types);
      if (o_.types.count("decision") && o_.decision_probes > 0) {
        need_llm_.push_back(out_.size());
        requests_.push_back(chat_request(kDecisionSystem,
                                         decision_prompt(o_.decision_probes, render_transcript(msgs, 0, msgs.size(), o_.max_tool_chars)),
                                         o_.temperature, o_.max_tokens));
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
    out_.push_back({{"probes", probes},
                   {"messages_total", msgs.size()},
                   {"tokens_history", transcript_tokens(msgs, 0, msgs.size())},
                   {"decision_errors", 0},
                   {"facts", facts_summary(f)}});
  }
}

json SessionProbes::output(const std::vector<BatchAnswer> &answers) {
  for (std::size_t i = 0; i < answers.size(); ++i) {
    json &o = out_[need_llm_[i]];
    // The host already retried; a failed call is an error of this node, not a silently missing probe.
    if (!answers[i].ok) throw std::runtime_error("decision probes: LLM call failed: " + answers[i].text);
    auto decisions = parse_decisions(answers[i].text);
    if (!decisions) {
      o["decision_errors"] = 1;
      o["decision_raw"] = answers[i].text;
      continue;
    }
    insert_decision_probes(o["probes"], *decisions, o_.decision_probes);
  }
  return out_;
}

}  // namespace compression
