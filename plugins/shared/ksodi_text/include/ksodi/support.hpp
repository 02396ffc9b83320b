// ksodi_text — lexical support: how much of a sentence's content a document states.
//
// The measure behind O0's default alignment (`alignment: support`). For a sentence and a document:
//   support = (weight of the sentence's content terms found in the document) / (weight of all its content terms)
// where
//  - content terms are the sentence's word tokens minus the stop words of the unit's language (German or
//    English, detected from the text), each counted once;
//  - a word is found when its Snowball stem (libstemmer) is among the document's stems, so "Verträge" finds
//    "Vertrag" and "cancelled" finds "cancel";
//  - German compounds: a word is also found when the document holds its parts ("Kündigungsfrist" ←
//    "Kündigung" + "Frist", linking s/es/n/en/e allowed) or a compound ending in it ("Frist" ← "Kündigungsfrist");
//  - numbers ("24", "9,99", "01.03.2023", number words two…twelve / zwei…zwölf as digits) and names (tokens with
//    an inner capital or a digit — "NordFlex", "HR", "T3" — and, in English, capitalised words inside a
//    sentence) must match exactly (accents folded, a name may differ in inflection only); they weigh
//    kExactWeight, and a missing one is reported separately: a swapped number or name makes a claim wrong
//    even when every other word matches.
//  - the speaker: a sentence in the first person singular ("I", "me", "my"; "ich", "mich", "mir", "mein…") says
//    something about whoever speaks ("I have an iguana", "Ich habe das selbst erlebt"). Pronouns are stop words,
//    so without a term of its own such a sentence would be scored on its other words alone and a document about
//    iguanas would "support" it. One Speaker term per sentence stands for that subject; a document holds it only
//    when it speaks in the first person itself (a quote, a user's own message). It weighs as a word, so a long
//    first-person sentence still rests on its content ("I recommend restarting the router first" keeps 4 of 5),
//    while a short claim about the speaker is as unsupported as any other free claim. A sentence of courtesy
//    words ("Let me know if you need anything") stays courtesy. English "I" right after a capitalised word
//    inside a sentence ("World War I", "Type I") is a numeral, not the speaker.
// Everything is versioned by kSupportVersion: any change to a list or a rule must bump it. It also versions how O0
// cuts an answer into claims (text::split_claims: JSON answers by their values, 1.3) and which of its words are
// given by the user (O0Params::user_words_given, 1.3).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ksodi::support {

inline constexpr const char *kSupportVersion = "ksodi-support-1.3";
inline constexpr double kExactWeight = 2.0;  // weight of a number or name against 1 for other content words

enum class Lang { En, De };
const char *lang_name(Lang l);  // "en" / "de"
// The language whose stop words occur more often in `text` (German on a tie only when it has any).
Lang detect_language(std::string_view text);
// How often the stop words of each language occur in `text` (for combining several texts); only its first
// ~100 words are read.
void count_stop_words(std::string_view text, int &en, int &de);

enum class TermKind : std::uint8_t { Word, Number, Name, Speaker };
struct Term {
  // Interned strings (see intern()/interned()): valid within one unit (begin_unit() may clear them between units).
  std::uint32_t key_id = 0;   // Word: folded stem; Number: canonical digits; Name: folded lowercase surface;
                              // Speaker: one fixed key
  std::uint32_t stem_id = 0;  // folded stem (Names match by it too; equals key_id for Words)
  std::string shown;          // the token as written (for the audit; the speaker: "I (speaker)")
  TermKind kind = TermKind::Word;
  double weight() const { return kind == TermKind::Number || kind == TermKind::Name ? kExactWeight : 1.0; }
  std::string_view key() const;
};

// The content terms of one sentence, in order of first occurrence, each key once.
std::vector<Term> sentence_terms(std::string_view sentence, Lang lang);
// True when every term is a word of courtesy or conversation management ("Sure! Here you go:", "Let me know if
// you need anything else.", "Gern geschehen, melden Sie sich bei weiteren Fragen."): such a sentence claims
// nothing a document could support. The speaker term does not count either way ("Let me know …" is courtesy);
// a sentence whose only term is the speaker ("Yes, I do.") is a claim about the speaker.
bool courtesy_only(const std::vector<Term> &terms);

// How a German compound may split (see support.cpp): parts by their interned exact form and stem.
struct CompoundPart {
  std::uint32_t exact, stem;
};
struct CompoundSplit {
  std::vector<CompoundPart> lefts;   // the modifier, with and without a linking element
  CompoundPart right{};              // the head …
  std::vector<CompoundSplit> inner;  // … or the head split once more
};

// A set of interned ids: open addressing, for membership tests in a few nanoseconds.
class IdSet {
 public:
  void build(const std::vector<std::uint32_t> &ids);
  bool contains(std::uint32_t id) const {
    if (slots_.empty()) return false;
    for (std::size_t i = slot(id);; i = (i + 1) & mask_) {
      if (slots_[i] == id) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  std::size_t slot(std::uint32_t id) const { return (id * 0x9E3779B1u) & mask_; }
  std::vector<std::uint32_t> slots_;
  std::size_t mask_ = 0;
};

// The terms a document offers for matching: the ids of its stems and of its exact forms. A document's own id is
// part of what it states when given (`kb-tarif-014`, `run_python`): answers cite it, and a tool's name says what
// its output is. Generated ids (`doc_3`, `tool_1`) carry nothing and are skipped. The text must outlive the index.
class DocIndex {
 public:
  DocIndex(std::string_view text, Lang lang, std::string_view id = {});
  bool contains(const Term &t) const;

 private:
  bool has_stem(std::uint32_t id) const { return stem_set_.contains(id); }
  bool has_exact(std::uint32_t id) const { return exact_set_.contains(id); }
  bool compound_found(const std::vector<CompoundSplit> &splits) const;
  bool speaks_first_person() const;  // the document itself says "I"/"ich" (it holds the speaker term)
  Lang lang_;
  std::string_view text_;  // for speaks_first_person(): the text outlives the index (one unit)
  mutable bool speaker_known_ = false, speaks_first_person_ = false;
  std::vector<std::uint32_t> stems_;  // folded stems of every word token, each once (for compound heads)
  IdSet stem_set_, exact_set_;        // stems; folded lowercase surfaces and canonical numbers
  // German words not found by their stem, and whether the compound rules found them: a unit asks for the same
  // word several times (per sentence, for its evidence, for the whole answer), and the rules are the costly part.
  mutable std::unordered_map<std::uint32_t, bool> compound_seen_;
  const std::vector<std::uint64_t> &heads() const;
  mutable std::vector<std::uint64_t> heads_;  // hashes of the stems' possible compound heads (lazily)
  mutable bool heads_built_ = false;
};

struct SentenceSupport {
  double support = 0;                // best over the documents (0 when there are no documents)
  double weight = 0;                 // total weight of the sentence's content terms (0: nothing to support)
  int best_doc = -1;                 // index of the best document
  std::vector<std::string> matched;  // shown forms of the terms the best document holds
  std::vector<std::string> missing;  // ... and of those it lacks
  std::vector<std::string> exact_missing;  // the numbers and names among the missing ones
};

// The support of `terms` by its best document (ties: the first).
SentenceSupport best_support(const std::vector<Term> &terms, const std::vector<DocIndex> &docs);
// The support of `terms` by one document (the weighted share found).
double support_in(const std::vector<Term> &terms, const DocIndex &doc);

// Strings are interned per thread: a term or document entry is an integer, so matching is integer search.
std::uint32_t intern(std::string_view s);
std::string_view interned(std::uint32_t id);
// Call before each unit: bounds the per-thread vocabulary and caches (clears them when they have grown large;
// ids of an earlier unit are then invalid).
void begin_unit();

// Folding used for matching: lowercase (ksodi::text::lower_cp) and Latin accents removed (ä→a, ß→ss, é→e).
std::string fold(std::string_view word);
// The Snowball stem of an already lowercased word (cached per thread).
std::string_view stem(std::string_view lowered, Lang lang);

}  // namespace ksodi::support
