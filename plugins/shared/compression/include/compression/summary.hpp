#pragma once
// The sectioned summary of the anchored and regenerative methods: what the summariser is asked for, how
// its JSON answer is read, how the anchored method merges a span's summary into the persisted one, and how
// a summary is rendered as the compressed context. Both structured methods render with the same headings,
// so the judge cannot tell them apart by layout.
#include <optional>
#include <string>
#include <vector>

#include "compression/facts.hpp"

namespace compression {

struct Decision {
  std::string decision, rationale, alternatives;
};
struct FileNote {
  std::string path, change;
};

struct Sections {
  std::string intent;
  std::vector<FileNote> file_notes;
  std::vector<Decision> decisions;
  std::vector<std::string> errors;
  std::string current_state;
  std::vector<std::string> next_steps;
};

// Reads the summariser's answer: a JSON object (see parse_json_answer) with the keys of the prompt.
// Missing keys are empty; a value of the wrong type makes the answer unusable. nullopt when unusable.
std::optional<Sections> parse_sections(const std::string &answer);
json sections_to_json(const Sections &s);

// Anchored merge: intent is kept (a changed intent is appended as an update); file notes, decisions and
// errors are appended (exact duplicates dropped) and never removed; current state and next steps are
// replaced by the newer span's (when it gives them).
void merge_span(Sections &into, const Sections &span);

// The compressed context. With `artifacts`, the Files section lists the deterministic artifact list
// (status, path, changes) with the summariser's notes merged in per path; without, only the notes.
std::string render_sections(const Sections &s, const std::vector<FileFacts> *artifacts);

// Prompts. The system prompt is shared; the user messages differ per method.
extern const char *const kSummariserSystem;
std::string anchored_prompt(const std::string &summary_so_far, const std::string &new_messages);
std::string regenerative_prompt(const std::string &history);
std::string opaque_prompt(const std::string &previous_summary, const std::string &new_messages);

}  // namespace compression
