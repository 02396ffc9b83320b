// The DE/EN lexicon of the format-request scanner (format_requests.cpp): the word classes of request words, number
// words, the form nouns (which format a token names), the nouns a form noun merely modifies ("JSON parser"), and
// units that follow a number. Data, looked up by the scanner; the rules that read it are in format_requests.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "ksodi/format_requests.hpp"

namespace ksodi::lexicon {

// ---- word classes ----------------------------------------------------------------------------------------
enum : std::uint32_t {
  W_DET = 1u << 0,           // definite / demonstrative / possessive determiner: refers to something that exists
  W_ART = 1u << 1,           // indefinite article
  W_SUBJ = 1u << 2,          // subject pronoun (or the rest of a contraction: I'll, I'd, we've)
  W_MODALQ = 1u << 3,        // can / could / kannst / können … (a request when followed by you/du/Sie)
  W_YOU = 1u << 4,           // you / du / Sie
  W_PLEASE = 1u << 5,        // please / bitte
  W_FRAME = 1u << 6,         // as / in / into / als / im … before a form noun
  W_WITH = 1u << 7,          // with / mit (only for nouns such as bullet points, headings, columns)
  W_STRONG = 1u << 8,        // give / provide / write / create / gib / erstelle … (imperative or base form)
  W_STRONG_INDEF = 1u << 9,  // use / include / add / nutze / verwende: a request only for a new thing ("use a table")
  W_WEAK = 1u << 10,         // need / want / prefer / brauche / möchte: "I need a list"
  W_FINAL = 1u << 11,        // German infinitive at the end of a request: "Kannst du mir eine Liste geben?"
  W_EXPLAIN = 1u << 12,      // explain / describe / erkläre … (a request for STEPS only: "explain the steps")
  W_EXPLAIN_FINAL = 1u << 13,  // erklären / beschreiben / nennen (verb-final, STEPS only)
  W_ANSWER = 1u << 14,       // answer / response / output / Antwort / Ausgabe
  W_MODALN = 1u << 15,       // must / should / muss / soll …: "your answer must contain …"
  W_LABEL = 1u << 16,        // format / output / ausgabe … followed by ':'
  W_QWORD = 1u << 17,        // what / which / welche / wie: "what are the steps?"
  W_COORD = 1u << 18,        // and / und / or / then / danach …
  W_PAST = 1u << 19,         // did / took / hast / gemacht …: a question about the past asks for no form
  W_CODEART = 1u << 20,      // a code artifact: code, script, function, Befehl …
  W_LANG = 1u << 21,         // python, bash (the seed's code cues)
  W_DB = 1u << 22,           // sql, database, Datenbank …: "create a table" names a database table
  W_DE_INF = 1u << 23,       // German infinitive that is an imperative when followed by "Sie" ("Geben Sie …")
  W_LISTVERB = 1u << 24,     // list / enumerate / itemize (English verb)
  W_OBLIG = 1u << 25,        // ensure / make sure / required / darf …: an obligation on the answer
  W_EXAMPLE = 1u << 26,      // such (as) / like / e.g. / format / Beispiel / Form …: introduces an example
  W_EACH = 1u << 27,         // each / every / per / jede … : "each section should have 2 bullet points" counts per section
  W_IMPER = 1u << 28,        // limit / keep / break / beschränke …: imperatives that bound a count ("Limit it to 3 bullet points")
};

// Each word's classes (W_*), for lowercased tokens.
const std::unordered_map<std::string_view, std::uint32_t> &word_table();

inline bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Number words (DE/EN). needs_modifier: "one"/"ein…" are numbers only after "exactly", "genau", "at most" …
int number_word(std::string_view w, bool &needs_modifier);

// Form nouns: the format a token (and maybe the next one) names, -1 if none.
// LIST nouns are either items (N_ITEM: "bullet points", "Stichpunkte", "items" — a count before them counts
// the answer's items) or containers ("list", "Liste", "Aufzählung" — a count before them counts lists).
enum : unsigned { N_WITH_OK = 1, N_DEF_WITH_OK = 2, N_COUNTED_ONLY = 4, N_ITEM = 8, N_BULLET = 16 };
struct Noun {
  int fmt = -1;
  unsigned flags = 0;
  std::size_t span = 1;
};
Noun form_noun(const text::TokenizedText &t, std::size_t i);

// Nouns that a form noun modifies name something else: "JSON parser", "table tennis", "table of contents".
bool modifier_use(int fmt, std::string_view w, std::string_view nx, std::string_view nx2);

// Nouns after a number that measure something rather than name the items of a list.
bool is_unit_word(std::string_view w);

}  // namespace ksodi::lexicon
