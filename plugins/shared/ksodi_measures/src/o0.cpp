#include "ksodi_measures/o0.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <unordered_set>

#include "ksodi/detect.hpp"
#include "ksodi/support.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

namespace {

// Attribution markers (versioned with detect::kDetectorVersion).
const detect::KeywordSet &kw_attrib() {
  static const detect::KeywordSet k{
      // German
      "laut", "gemäß", "zufolge", "im dokument", "in dokument", "dem dokument", "des dokuments", "im abschnitt",
      "in abschnitt", "quelle", "quellen", "siehe", "steht in", "steht im", "wie oben", "aus den punkten", "aus punkt",
      "folgt aus", "daraus folgt", "im handbuch", "in der richtlinie", "in der dokumentation", "in den unterlagen",
      "im artikel", "verweis*", "zitiert", "wörtlich", "§",
      // English
      "according to", "as stated", "as described in", "as noted in", "as shown in", "as per", "per the",
      "the document", "the documentation", "in section", "in the section", "source", "sources", "cited",
      "see section", "see the", "see also", "see above", "see below", "see page", "see chapter", "see doc*",
      "refer to", "refers to", "as mentioned above", "as above", "follows from", "stated in", "the policy states",
      "the manual", "the article"};
  return k;
}

// The non-zero entries of every embedding row, for cosines in O(non-zeros) instead of O(dim): TF-IDF rows are
// mostly zeros (dim = the call's whole vocabulary). The result is bit-identical to ksodi::cosine(): the dot
// product sums the non-zero products in the same (increasing index) order — walking the non-zeros of either
// row and looking the other row up densely gives the same products, because a product with an exact zero
// adds exactly +-0, which leaves a sum starting at +0 unchanged — and the norms are the same sums.
class SparseRows {
 public:
  SparseRows(const EmbedResult &e, std::size_t rows) : e_(e), dim_(e.dim) {
    // Thread-local storage: this runs once per record, and the buffers keep their capacity.
    thread_local Buffers tl;
    b_ = &tl;
    b_->start.clear();
    b_->root.clear();
    b_->start.reserve(rows + 1);
    b_->root.reserve(rows);
    b_->start.push_back(0);
    if (b_->idx.size() < rows * dim_) {
      b_->idx.resize(rows * dim_);
      b_->val.resize(rows * dim_);
    }
    std::uint32_t *idx = b_->idx.data();
    float *val = b_->val.data();
    std::size_t k = 0;
    bool finite = true;
    for (std::size_t r = 0; r < rows; ++r) {
      const float *v = e.row(r);
      const std::size_t k0 = k;
      // Branch-free compaction (whether an entry is zero is unpredictable): every entry is written, and the
      // write position only advances past non-zero ones.
      for (std::size_t i = 0; i < dim_; ++i) {
        const float x = v[i];
        idx[k] = static_cast<std::uint32_t>(i);
        val[k] = x;
        finite &= (x - x) == 0.0f;  // false for inf and NaN
        k += x != 0.0f ? 1 : 0;
      }
      // The norm over the non-zeros only (in index order): the zeros add exactly +0, so the sum is the same,
      // and its chain of dependent additions is much shorter.
      double n = 0;
      for (std::size_t q = k0; q < k; ++q) n += static_cast<double>(val[q]) * val[q];
      // sqrt(norm) once per row instead of twice per cosine (the same value each time); -1 marks a zero row.
      b_->root.push_back(n > 0 ? std::sqrt(n) : -1.0);
      b_->start.push_back(k);
    }
    finite_ = finite;  // inf * 0 is NaN: only the dense loop gets that right
  }
  // cos(row a, row b).
  double cosine(std::size_t a, std::size_t b) const {
    if (!finite_) return ksodi::cosine(e_.row(a), e_.row(b), dim_);
    const double ra = b_->root[a], rb = b_->root[b];
    if (ra < 0 || rb < 0) return 0.0;
    // Walk the shorter list of non-zeros, look the other row up densely.
    const std::size_t *st = b_->start.data();
    std::size_t s = a, d = b;
    if (st[b + 1] - st[b] < st[a + 1] - st[a]) std::swap(s, d);
    const float *dense = e_.row(d);
    const std::uint32_t *idx = b_->idx.data();
    const float *val = b_->val.data();
    double dot = 0;
    for (std::size_t k = st[s]; k < st[s + 1]; ++k) dot += static_cast<double>(val[k]) * dense[idx[k]];
    return dot / (ra * rb);
  }

 private:
  struct Buffers {
    std::vector<std::size_t> start;
    std::vector<std::uint32_t> idx;
    std::vector<float> val;
    std::vector<double> root;
  };
  const EmbedResult &e_;
  std::size_t dim_;
  bool finite_ = true;
  Buffers *b_ = nullptr;
};

}  // namespace

int count_attribution_markers(std::string_view sentence, std::vector<std::string> *kinds) {
  thread_local text::TokenizedText t;  // reused: its buffers keep their capacity across calls
  t.assign(sentence);
  const char *hit = nullptr;
  int n = static_cast<int>(kw_attrib().count_and_find(t, false, &hit));
  if (kinds != nullptr && hit != nullptr) kinds->emplace_back(hit);  // the first keyword marker, for the audit
  std::size_t q = detect::count_quotations(sentence), b = detect::count_bracket_refs(sentence),
              pr = detect::count_paren_refs(sentence);
  if (kinds != nullptr) {
    if (q > 0) kinds->emplace_back("quotation");
    if (b > 0) kinds->emplace_back("[n] reference");
    if (pr > 0) kinds->emplace_back("(section/page) reference");
  }
  return n + static_cast<int>(q + b + pr);
}

namespace {

// The user's words (O0Params::user_words_given): a word of the user's message that no document holds is given by
// the conversation — the user's own columns, files, things — and is removed from the sentence's terms (neither
// found nor missing). Only plain words: numbers and names stay claims that a document must state even when the
// user named them ("Hamburg-Vienna takes over four hours" is a fact about the user's cities, not the user's
// vocabulary). Not in a first-person sentence: there the assistant speaks of itself, and the user's words it
// takes up ("I love cookies too", "I'm familiar with him") are claims about the speaker. The speaker term is
// never given (the user's "I" is not the assistant's).
void mark_given(std::vector<support::Term> &terms, const support::DocIndex &user, const std::vector<support::DocIndex> &docs,
                std::vector<std::string> &given) {
  using support::Term;
  using support::TermKind;
  if (std::any_of(terms.begin(), terms.end(), [](const Term &t) { return t.kind == TermKind::Speaker; })) return;
  auto is_given = [&](const Term &t) {
    if (t.kind != TermKind::Word || !user.contains(t)) return false;
    return std::none_of(docs.begin(), docs.end(), [&](const support::DocIndex &d) { return d.contains(t); });
  };
  for (const Term &t : terms)
    if (is_given(t)) given.push_back(t.shown);
  if (!given.empty()) terms.erase(std::remove_if(terms.begin(), terms.end(), is_given), terms.end());
}

// Lexical support (ksodi/support.hpp): align_j = the support of sentence j by its best document; A_ret = the
// answer's support = the mean of its sentences' supports weighted by their content terms, each sentence by its
// own best document (an answer that combines two documents is grounded; one claim stitched together from
// several documents is not, so a sentence is never matched against the union of the documents).
void support_alignment(O0Result &r, std::string_view answer, std::string_view user_text,
                       const std::vector<std::string_view> &sents, const std::vector<std::string_view> &doc_texts,
                       const O0Params &p) {
  using namespace support;
  begin_unit();
  // One language per unit: the answer's stop words decide (the documents', when the answer has none).
  int en = 0, de = 0;
  count_stop_words(answer, en, de);
  if (en == 0 && de == 0)
    for (auto d : doc_texts) count_stop_words(d, en, de);
  const Lang lang = de > en ? Lang::De : Lang::En;
  r.language = lang_name(lang);
  std::vector<DocIndex> docs;
  docs.reserve(doc_texts.size());
  for (std::size_t i = 0; i < doc_texts.size(); ++i) docs.emplace_back(doc_texts[i], lang, r.doc_ids[i]);
  // The user's words are indexed on first use: most sentences of most answers never ask.
  const bool use_user = p.user_words_given && !text::trim(user_text).empty();
  std::optional<DocIndex> user;
  r.computed = true;
  std::vector<Term> all;  // the answer's terms, each once, for the per-document alignment of the whole answer
  std::unordered_set<std::uint64_t> seen;  // (key, kind) of the terms in `all`
  double weighted = 0, weight = 0;
  for (std::size_t j = 0; j < sents.size(); ++j) {
    O0Sentence &os = r.sentences[j];
    std::vector<Term> terms = sentence_terms(sents[j], lang);
    if (terms.empty() || courtesy_only(terms)) {  // nothing claimed: neither supported nor unsupported
      os.has_terms = false;
      continue;
    }
    if (use_user) {
      if (!user) user.emplace(user_text, lang);
      mark_given(terms, *user, docs, os.given);
      if (!os.given.empty() && (terms.empty() || courtesy_only(terms))) {  // what is left claims nothing
        os.has_terms = false;
        continue;
      }
    }
    SentenceSupport ss = best_support(terms, docs);
    os.align = ss.support;
    os.best_doc = ss.best_doc;
    os.matched = std::move(ss.matched);
    os.missing = std::move(ss.missing);
    os.exact_missing = std::move(ss.exact_missing);
    os.unsupported = (os.align < p.tau || !os.exact_missing.empty()) && os.markers == 0;
    r.n_unsupported += os.unsupported ? 1 : 0;
    weighted += ss.weight * ss.support;
    weight += ss.weight;
    for (Term &t : terms)
      if (seen.insert((static_cast<std::uint64_t>(t.key_id) << 2) | static_cast<std::uint64_t>(t.kind)).second)
        all.push_back(std::move(t));
  }
  for (std::size_t i = 0; i < docs.size(); ++i) {
    double s = support_in(all, docs[i]);
    r.doc_alignment.push_back(s);
    if (r.best_doc < 0 || s > r.doc_alignment[static_cast<std::size_t>(r.best_doc)]) r.best_doc = static_cast<int>(i);
  }
  // No content term at all ("Danke!", "Yes."): nothing to ground — neutral, like S0's F without expectations.
  r.no_content_terms = weight == 0;
  r.A_ret = weight > 0 ? weighted / weight : 0.5;
}

// The seed-literal alignment: embedding cosines (one embedding call per unit).
void cosine_alignment(O0Result &r, std::string_view answer, const std::vector<std::string_view> &sents,
                      const std::vector<std::string_view> &doc_texts, const O0Params &p, const EmbedFn &embed) {
  // One call: answer, docs, answer sentences (and doc sentences) — TF-IDF vectors are only comparable within a call.
  std::vector<std::string_view> texts;
  texts.reserve(1 + doc_texts.size() + sents.size());
  texts.push_back(answer);
  texts.insert(texts.end(), doc_texts.begin(), doc_texts.end());
  texts.insert(texts.end(), sents.begin(), sents.end());
  std::vector<std::size_t> unit_owner;  // doc index of each doc sentence appended after the answer sentences
  if (p.doc_sentences) {
    for (std::size_t i = 0; i < doc_texts.size(); ++i) {
      std::vector<std::string_view> ds = text::split_sentences(doc_texts[i]);
      if (ds.size() < 2) continue;  // a one-sentence doc is already compared as a whole
      for (auto d : ds) {
        texts.push_back(d);
        unit_owner.push_back(i);
      }
    }
  }
  EmbedResult e = embed(texts);
  r.embedding_model_id = e.model_id;
  const std::size_t nd = doc_texts.size();
  const SparseRows sp(e, texts.size());
  r.computed = true;
  r.A_ret = 0;
  for (std::size_t i = 0; i < nd; ++i) {
    double c = clip01(sp.cosine(0, 1 + i));
    r.doc_alignment.push_back(c);
    if (r.best_doc < 0 || c > r.A_ret) {
      r.A_ret = c;
      r.best_doc = static_cast<int>(i);
    }
  }
  for (std::size_t j = 0; j < r.sentences.size(); ++j) {
    O0Sentence &os = r.sentences[j];
    os.align = 0;
    for (std::size_t i = 0; i < nd; ++i) {
      double c = clip01(sp.cosine(1 + nd + j, 1 + i));
      if (os.best_doc < 0 || c > os.align) {
        os.align = c;
        os.best_doc = static_cast<int>(i);
      }
    }
    const std::size_t base = 1 + nd + r.sentences.size();
    for (std::size_t k = 0; k < unit_owner.size(); ++k) {
      double c = clip01(sp.cosine(1 + nd + j, base + k));
      if (c > os.align) {
        os.align = c;
        os.best_doc = static_cast<int>(unit_owner[k]);
      }
    }
    os.unsupported = os.align < p.tau && os.markers == 0;
    r.n_unsupported += os.unsupported ? 1 : 0;
  }
}

// The answer's units: with support, its claims (JSON answers by their string values, code left out); the cosine
// alignment keeps the seed-literal sentences.
std::vector<std::string_view> alignment_units(std::string_view answer, const O0Params &p) {
  return p.alignment == Alignment::Support ? text::split_claims(answer) : text::split_sentences(answer);
}

}  // namespace

O0Result compute_o0(const O0Input &in, const O0Params &p, const EmbedFn &embed) {
  O0Result r;
  std::vector<std::string_view> doc_texts;
  auto add_docs = [&](const std::vector<Doc> &docs, const char *kind) {
    for (const Doc &d : docs) {
      if (text::trim(d.text).empty()) {
        ++r.empty_docs_skipped;
        continue;
      }
      r.doc_ids.push_back(d.id);
      r.doc_kinds.emplace_back(kind);
      doc_texts.push_back(d.text);
    }
  };
  add_docs(in.docs, "retrieved");
  if (p.include_tool_outputs) add_docs(in.tool_outputs, "tool_output");

  // Sentences and attribution markers (independent of the docs).
  const std::string_view answer = in.answer;
  const std::vector<std::string_view> sents = alignment_units(answer, p);
  r.n_sent = static_cast<int>(sents.size());
  std::vector<std::string> kinds;
  for (auto s : sents) {
    O0Sentence os;
    os.start = static_cast<std::size_t>(s.data() - answer.data());
    os.length = s.size();
    os.markers = count_attribution_markers(s, &kinds);
    r.n_attrib += os.markers;
    r.sentences.push_back(os);
  }
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  r.marker_kinds = std::move(kinds);
  r.T = r.n_sent == 0 ? 0.0 : clip01(static_cast<double>(r.n_attrib) / (r.n_sent + 1.0));
  if (doc_texts.empty()) return r;  // not computed: no docs to ground against
  if (p.alignment == Alignment::Support) {
    support_alignment(r, answer, in.user_text, sents, doc_texts, p);
  } else {
    cosine_alignment(r, answer, sents, doc_texts, p, embed);
  }
  r.U = r.n_sent == 0 ? 0.0 : static_cast<double>(r.n_unsupported) / r.n_sent;
  r.O0 = clip01(p.alpha * r.A_ret + p.beta * r.T - p.gamma * r.U);
  return r;
}

}  // namespace ksodi
