// Which output formats a prompt *asks for* (not merely mentions), and requested item counts: S0's expectations
// and K0's E dimension. Hand-written token scanner over ksodi::text::TokenizedText (no regex). The rules are
// documented in plugins/operators/ksodi_s0/README.md ("Expectations E"); they are versioned with
// detect::kDetectorVersion.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "ksodi/text.hpp"

namespace ksodi {

// Index order = kFormats in s0.hpp: JSON, LIST, STEPS, TABLE, CODEBLOCK, HEADINGS.
enum FormatIndex : int { kFmtJson = 0, kFmtList, kFmtSteps, kFmtTable, kFmtCode, kFmtHeadings, kNumFormats };

enum class CountRel { Exact, AtLeast, AtMost };
const char *count_rel_name(CountRel r);  // "exactly", "at least", "at most"
bool count_holds(CountRel r, int requested, int found);

struct CountRequirement {
  CountRel rel = CountRel::Exact;
  int n = 0;           // "more than 3" is stored as at least 4, "fewer than 3" as at most 2
  std::string phrase;  // the words that stated it, lowercased ("genau drei punkte")
  std::string source;  // system_prompt / tool_profile / user_text
  // LIST: the count names the answer's items themselves ("exactly 4 bullet points", "genau drei Stichpunkte"):
  // all top-level items of the answer count. false: it names the length of one list ("a list of 5 items",
  // "list three reasons", "top 3"): the answer's largest list block counts.
  bool whole_answer = false;
};

// LIST: the item marker a request asks for.
enum class ListMarker { Any, Bullet, Numbered };
// "any", "bullet", "markdown bullet" (- * +), "numbered"
const char *list_marker_name(ListMarker m, bool markdown);

struct FormatRequest {
  bool raised = false;
  std::string evidence;                   // "user_text: 'antworte in stichpunkten'" (the first source that asked)
  std::vector<CountRequirement> counts;   // LIST and STEPS only; every one must hold
  bool by_task_verb = false;              // LIST raised only by a task verb ("list …", "liste … auf", "top 3")
  // LIST only (read whether or not LIST is raised; S0 uses them where it is): the marker the request asks for —
  // from the noun that asked ("bullet points" → bullet, "numbered list" → numbered), a marker phrase in a
  // sentence about the list ("marked by an asterisk", "in markdown", "mit Spiegelstrichen") or an example bullet
  // inside the request ("such as: * This is a point"). A higher rank replaces a lower one: 1 noun, 2 phrase,
  // 3 example.
  ListMarker marker = ListMarker::Any;
  bool marker_markdown = false;  // a markdown bullet (- * +) is asked for: "markdown", an asterisk/dash, an example
  int marker_rank = 0;
  std::string marker_phrase;     // the words that named the marker ("bullet points", "such as: * this is a point")
};
using FormatRequests = std::array<FormatRequest, kNumFormats>;

// Adds what `raw` (tokenised as `t`) asks for to `out`. Earlier calls take precedence for the evidence.
void detect_format_requests(const char *source_name, std::string_view raw, const text::TokenizedText &t, FormatRequests &out);

}  // namespace ksodi
