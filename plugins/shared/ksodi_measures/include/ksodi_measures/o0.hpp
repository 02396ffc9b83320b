// O0 — observable objectivity = grounding relative to retrieval (KSODI-Standard-Eval). Pure computation.
#pragma once

#include <string>
#include <vector>

#include "ksodi/embed.hpp"
#include "evalgraph/input.hpp"

namespace ksodi {

using Doc = evalgraph::Doc;  // a retrieved document or a tool output, as the SDK's input reader gives it

struct O0Input {
  std::string answer;
  std::vector<Doc> docs;          // retrieved docs of this unit
  std::vector<Doc> tool_outputs;  // tool outputs that were in the prompt: extra docs
  std::string user_text;          // the user's message: its words are given, not claims (Support, user_words)
};

// How align_j and A_ret are measured.
//  - Support (default): lexical support (ksodi/support.hpp) — the weighted share of a sentence's content terms
//    that its best document states, numbers and names exactly. Validated against human labels
//    (bench/validity.sh); weights and tau calibrated for it (o0_calibration.hpp).
//  - Cosine: the seed-literal embedding cosine (host embedder, offline TF-IDF by default), with the seed's
//    start values; bit-for-bit the results of evalgraph before the support measure.
enum class Alignment { Support, Cosine };

struct O0Params {
  Alignment alignment = Alignment::Support;
  double alpha = 0.6, beta = 0.2, gamma = 0.2;
  double tau = 0.35;
  bool include_tool_outputs = true;
  // U's alignment also compares each answer sentence with each sentence of each doc (max over whole docs and
  // doc sentences). false = the seed's literal max over whole docs only. See README: a supported sentence
  // compared with a whole ~1 KB doc rarely reaches tau with TF-IDF, because the doc's other terms dilute it.
  bool doc_sentences = true;
  // Support only: plain words of the answer that the user's own message holds and no document does (the user's
  // columns, files, things) are given by the conversation, not claims: neither found nor missing. Numbers and
  // names stay claims; first-person sentences are scored as they are (see o0.cpp, mark_given).
  bool user_words_given = true;
};

struct O0Sentence {
  std::size_t start = 0, length = 0;  // byte range in the answer
  double align = 0;                   // max_i cos(e(s_j), e(d_i))
  int best_doc = -1;                  // index into O0Result::doc_ids
  int markers = 0;                    // attribution markers in the sentence
  bool unsupported = false;           // align < tau (or, with Support, a number/name missing) and no marker
  // Support only: the sentence's content terms (as written) its best document holds / lacks, and the numbers
  // and names among the missing ones. has_terms = false: no content term (nothing claimed, never unsupported).
  bool has_terms = true;
  std::vector<std::string> matched, missing, exact_missing;
  std::vector<std::string> given;  // Support with user_words_given: terms taken from the user's message
};

struct O0Result {
  bool computed = false;  // false: no docs → O0, A_ret and U are null (flag "no_retrieved_docs")
  double O0 = 0, A_ret = 0, T = 0, U = 0;
  int n_sent = 0, n_attrib = 0, n_unsupported = 0, empty_docs_skipped = 0;
  std::vector<std::string> doc_ids;    // retrieved ids, then tool output ids (as compared)
  std::vector<std::string> doc_kinds;  // "retrieved" / "tool_output" per doc_ids entry
  std::vector<double> doc_alignment;   // cos(e(a), e(d_i)) per doc
  int best_doc = -1;
  bool no_content_terms = false;   // Support only: no sentence has a content term (A_ret = 0.5, flagged)
  std::string embedding_model_id;  // Cosine only
  std::string language;            // Support only: "de" / "en", the unit's language for stop words and stems
  std::vector<std::string> marker_kinds;  // distinct marker patterns seen (audit)
  std::vector<O0Sentence> sentences;
};

// Support: no embedding call. Cosine: one embedding call with [answer, docs…, sentences…].
O0Result compute_o0(const O0Input &in, const O0Params &p, const EmbedFn &embed);

// Attribution markers in one sentence (keyword phrases + quotations + [n] + (Kap. 2)-style references).
int count_attribution_markers(std::string_view sentence, std::vector<std::string> *kinds = nullptr);

}  // namespace ksodi
