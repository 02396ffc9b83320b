// S0 — observable structure (KSODI-Standard-Eval). Pure computation; the plugin glue is in plugin.cpp.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ksodi/embed.hpp"

namespace ksodi {

struct S0Input {
  std::string answer;
  std::string system_prompt;
  std::string tool_profile;
  std::string user_text;
  std::string tool_profile_id;
};

enum class Redundancy { Embedding, Jaccard };

struct S0Params {
  double alpha = 0.4, beta = 0.4, gamma = 0.2;
  double K = 10;                  // G_str normaliser
  double f_neutral = 0.5;         // F when no format is expected
  double list_min_share = 0.0;    // optional extra LIST condition: this share of the non-blank lines are items (0 = off)
  // LIST where the request names a marker ("bullet points", "numbered list", "such as: * a point"): true
  // ("fail"): top-level items of another marker are not counted as the requested items, so a numbered list
  // where bullet points were asked fails; false ("count"): they count (the mismatch is still reported).
  bool list_marker_mismatch_fails = true;
  double short_answer_min = 0.2;  // guardrail: G_str floor for a non-empty one-sentence answer
  bool use_user_text = true;      // the user text may state format wishes too
  Redundancy redundancy = Redundancy::Embedding;
  std::map<std::string, double> alpha_by_tool_profile;  // tool_profile_id → alpha (e.g. strict-JSON tools)
};

// Expected formats, in this fixed order.
inline constexpr const char *kFormats[] = {"JSON", "LIST", "STEPS", "TABLE", "CODEBLOCK", "HEADINGS"};

// Items behind a LIST / STEPS verdict (lines are 1-based; 0 when nothing was found).
struct FormatItems {
  int n_items = 0;         // LIST: top-level items of the largest list block; STEPS: steps of the best ordered run
  int first_line = 0, last_line = 0;
  std::string first_item;  // text of the first counted item (cut to 60 bytes)
  int n_blocks = 0;        // LIST: list blocks in the answer; STEPS: numbered runs (ordered or not)
  // LIST only:
  std::string counted_over;      // "largest list block" or "whole answer" (a count of the answer's items)
  std::string marker_requested;  // "any", "bullet", "markdown bullet", "numbered"
  std::string marker_phrase;     // the words that named the marker ("" for any)
  int n_other_marker = 0;        // top-level items of another marker than the requested one
  bool marker_mismatch = false;  // n_other_marker > 0
};

// One requested count checked against the items found.
struct CountCheck {
  std::string relation;  // "exactly", "at least", "at most"
  int requested = 0, found = 0;
  bool passed = false;
  std::string phrase, source;  // the words that asked, and where
};

struct S0Result {
  double S0 = 0, F = 0, G_str = 0, R_red = 0;
  double alpha = 0;             // the alpha actually used
  std::string alpha_source;     // "default", "param" or "tool_profile:<id>"
  bool no_explicit_format = false;
  bool short_answer_guardrail = false;
  std::vector<std::string> expectations;                    // e.g. {"JSON","STEPS"}
  std::map<std::string, std::string> expectation_evidence;  // format → "tool_profile: 'json'"
  std::map<std::string, bool> format_passed;                // format → passed
  std::map<std::string, std::string> format_evidence;       // format → why it passed/failed
  std::map<std::string, FormatItems> format_items;          // LIST / STEPS → the items counted
  std::map<std::string, std::vector<CountCheck>> format_counts;  // LIST / STEPS → requested counts
  int n_paragraphs = 0, n_bullets = 0, n_numbered = 0, n_headings = 0, n_sentences = 0;
  double list_share = 0;
  std::vector<double> paragraph_similarities;  // sim(p_i, p_j) for i < j, row by row
  std::string similarity_model_id;             // embedding model id, "jaccard-tokens" or "" (< 2 paragraphs)
};

// `embed` is only called when R_red needs it (>= 2 paragraphs and redundancy = Embedding): one call with
// the answer's paragraphs.
S0Result compute_s0(const S0Input &in, const S0Params &p, const EmbedFn &embed);

// List blocks of an answer: runs of bullet/numbered lines; nested (more indented) items, indented or lazy
// continuation lines, blank lines between items and indented code belong to the item above; a numbered list
// interrupted by unindented prose continues when its numbering does (1. 2. <text> 3.).
struct ListBlock {
  int n_items = 0;  // top-level items
  int n_bullets = 0, n_markdown_bullets = 0, n_numbered = 0;  // top-level items by marker (markdown: - * +)
  std::size_t first_line = 0, last_line = 0;  // 0-based line indices of the first and the last top-level item
  std::string_view first_item;
};
std::vector<ListBlock> list_blocks(std::string_view answer);

// The individual format checks (exposed for tests); `evidence` receives a short reason.
bool check_json(std::string_view answer, std::string &evidence);
bool check_list(std::string_view answer, double min_share, double &share, std::string &evidence);
bool check_steps(std::string_view answer, std::string &evidence);
// STEPS with the number of steps of the best ordered run (0 if none).
bool check_steps(std::string_view answer, std::string &evidence, int &n_steps);
bool check_table(std::string_view answer, std::string &evidence);
bool check_codeblock(std::string_view answer, std::string &evidence);
bool check_headings(std::string_view answer, std::string &evidence);

}  // namespace ksodi
