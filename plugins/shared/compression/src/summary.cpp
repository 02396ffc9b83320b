#include "compression/summary.hpp"

#include <algorithm>

#include "compression/llm_util.hpp"

namespace compression {

const char *const kSummariserSystem =
    "You compress the working history of an AI coding agent so that the agent can continue its work from "
    "your summary alone. Keep file paths, function and variable names, commands, error messages, test names "
    "and version numbers exactly as written. Do not invent anything that is not in the messages.";

namespace {

const char *const kShape =
    "Return one JSON object and nothing else, with these keys:\n"
    "  \"intent\": the user's goal (string),\n"
    "  \"files\": [{\"path\": ..., \"change\": what was done to or learned from the file}],\n"
    "  \"decisions\": [{\"decision\": ..., \"rationale\": why, \"alternatives\": what else was considered}],\n"
    "  \"errors\": [error messages, verbatim],\n"
    "  \"current_state\": where the work stands (string),\n"
    "  \"next_steps\": [pending work, failing tests, unfinished tasks].\n";

bool str_at(const json &j, const char *k, std::string &out) {
  auto it = j.find(k);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  out = trim(it->get<std::string>());
  return true;
}

// Calls read(x) for each element of the array at `k` (absent or null: none); false where it is not an array or
// read refuses an element.
template <class F> bool each_of(const json &j, const char *k, F &&read) {
  auto it = j.find(k);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_array()) return false;
  for (const auto &x : *it)
    if (!read(x)) return false;
  return true;
}

bool str_list(const json &j, const char *k, std::vector<std::string> &out) {
  return each_of(j, k, [&](const json &x) {
    if (!x.is_string()) return false;
    std::string t = trim(x.get<std::string>());
    if (!t.empty()) out.push_back(t);
    return true;
  });
}

template <class T> void append_unique(std::vector<T> &to, const T &x, bool (*same)(const T &, const T &)) {
  for (const auto &y : to)
    if (same(x, y)) return;
  to.push_back(x);
}

bool same_str(const std::string &a, const std::string &b) { return a == b; }
bool same_note(const FileNote &a, const FileNote &b) { return a.path == b.path && a.change == b.change; }
bool same_decision(const Decision &a, const Decision &b) { return a.decision == b.decision; }

}  // namespace

std::optional<Sections> parse_sections(const std::string &answer) {
  auto j = parse_json_answer(answer);
  if (!j || !j->is_object()) return std::nullopt;
  Sections s;
  if (!str_at(*j, "intent", s.intent) || !str_at(*j, "current_state", s.current_state) ||
      !str_list(*j, "errors", s.errors) || !str_list(*j, "next_steps", s.next_steps))
    return std::nullopt;
  const bool ok = each_of(*j, "files", [&](const json &f) {
    FileNote n;
    if (!f.is_object() || !str_at(f, "path", n.path) || !str_at(f, "change", n.change)) return false;
    if (!n.path.empty()) s.file_notes.push_back(n);
    return true;
  }) && each_of(*j, "decisions", [&](const json &d) {
    Decision x;
    if (!d.is_object() || !str_at(d, "decision", x.decision) || !str_at(d, "rationale", x.rationale)) return false;
    if (auto al = d.find("alternatives"); al != d.end() && al->is_array()) {
      std::vector<std::string> alts;
      if (!str_list(d, "alternatives", alts)) return false;
      for (const auto &x2 : alts) x.alternatives += (x.alternatives.empty() ? "" : "; ") + x2;
    } else if (!str_at(d, "alternatives", x.alternatives)) {
      return false;
    }
    if (!x.decision.empty()) s.decisions.push_back(x);
    return true;
  });
  if (!ok) return std::nullopt;
  return s;
}

json sections_to_json(const Sections &s) {
  json files = json::array(), decisions = json::array();
  for (const auto &f : s.file_notes) files.push_back({{"path", f.path}, {"change", f.change}});
  for (const auto &d : s.decisions)
    decisions.push_back({{"decision", d.decision}, {"rationale", d.rationale}, {"alternatives", d.alternatives}});
  return {{"intent", s.intent},   {"files", files},
          {"decisions", decisions}, {"errors", s.errors},
          {"current_state", s.current_state}, {"next_steps", s.next_steps}};
}

void merge_span(Sections &into, const Sections &span) {
  if (into.intent.empty()) into.intent = span.intent;
  else if (!span.intent.empty() && span.intent != into.intent && into.intent.find(span.intent) == std::string::npos)
    into.intent += "\nUpdate: " + span.intent;
  for (const auto &n : span.file_notes) append_unique(into.file_notes, n, &same_note);
  for (const auto &d : span.decisions) append_unique(into.decisions, d, &same_decision);
  for (const auto &e : span.errors) append_unique(into.errors, e, &same_str);
  if (!span.current_state.empty()) into.current_state = span.current_state;
  if (!span.next_steps.empty()) into.next_steps = span.next_steps;
}

std::string render_sections(const Sections &s, const std::vector<FileFacts> *artifacts) {
  std::string o = "## Session intent\n" + (s.intent.empty() ? std::string("(not stated)") : s.intent) + "\n\n## Files\n";
  std::size_t nfiles = 0;
  std::vector<bool> used(s.file_notes.size(), false);
  if (artifacts != nullptr) {
    for (const auto &f : *artifacts) {
      std::vector<std::string> parts = f.changes;
      for (std::size_t i = 0; i < s.file_notes.size(); ++i)
        if (s.file_notes[i].path == f.path) {
          used[i] = true;
          if (!s.file_notes[i].change.empty() &&
              std::find(parts.begin(), parts.end(), s.file_notes[i].change) == parts.end())
            parts.push_back(s.file_notes[i].change);
        }
      std::string line = "- " + f.status() + ": " + f.path;
      for (std::size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? " — " : "; ") + parts[i];
      o += line + "\n";
      ++nfiles;
    }
  }
  for (std::size_t i = 0; i < s.file_notes.size(); ++i) {
    if (used[i]) continue;
    o += "- " + s.file_notes[i].path + (s.file_notes[i].change.empty() ? "" : " — " + s.file_notes[i].change) + "\n";
    ++nfiles;
  }
  if (nfiles == 0) o += "(none)\n";
  o += "\n## Decisions\n";
  for (const auto &d : s.decisions) {
    o += "- " + d.decision;
    if (!d.rationale.empty()) o += " — why: " + d.rationale;
    if (!d.alternatives.empty()) o += " (alternatives: " + d.alternatives + ")";
    o += "\n";
  }
  if (s.decisions.empty()) o += "(none)\n";
  o += "\n## Errors\n";
  for (const auto &e : s.errors) o += "- " + e + "\n";
  if (s.errors.empty()) o += "(none)\n";
  o += "\n## Current state\n" + (s.current_state.empty() ? std::string("(unknown)") : s.current_state) + "\n\n## Next steps\n";
  for (const auto &n : s.next_steps) o += "- " + n + "\n";
  if (s.next_steps.empty()) o += "(none)\n";
  return o;
}

std::string anchored_prompt(const std::string &summary_so_far, const std::string &new_messages) {
  return std::string("The messages below are being removed from the agent's context. A summary of everything "
                     "before them already exists and will be kept; summarise ONLY the new messages, so that "
                     "the result can be merged into it.\n") +
         kShape + "\n### Summary so far (for reference, do not repeat it)\n" +
         (summary_so_far.empty() ? std::string("(none yet)") : summary_so_far) + "\n\n### New messages\n" + new_messages;
}

std::string regenerative_prompt(const std::string &history) {
  return std::string("Write the complete structured summary of the whole agent session below, from its first "
                     "message to its last; it replaces all of these messages in the agent's context.\n") +
         kShape + "\n### Session\n" + history;
}

std::string opaque_prompt(const std::string &previous_summary, const std::string &new_messages) {
  return std::string("The agent's context window is full. Compact the conversation: write a concise summary, "
                     "in plain prose, of the earlier summary and the messages below that will replace them "
                     "all. Write only the summary.\n") +
         "\n### Earlier summary\n" + (previous_summary.empty() ? std::string("(none)") : previous_summary) +
         "\n\n### Messages\n" + new_messages;
}

}  // namespace compression
