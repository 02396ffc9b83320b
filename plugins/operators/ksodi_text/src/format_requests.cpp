// Format requests: which output formats a prompt asks for (not merely mentions), and requested item counts — the
// expectations of S0 and the E dimension of K0. Rules: plugins/operators/ksodi_s0/README.md ("Expectations E").
#include "ksodi/format_requests.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "ksodi/detect.hpp"

namespace ksodi {

namespace {

using text::TokenizedText;

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
};

const std::unordered_map<std::string_view, std::uint32_t> &word_table() {
  static const std::unordered_map<std::string_view, std::uint32_t> m = [] {
    std::unordered_map<std::string_view, std::uint32_t> t;
    auto add = [&](std::uint32_t f, std::initializer_list<std::string_view> ws) {
      for (auto w : ws) t[w] |= f;
    };
    add(W_DET, {"the", "this", "that", "these", "those", "my", "your", "our", "his", "her", "their", "its", "der", "die",
                "das", "dem", "den", "des", "dies", "diese", "dieser", "dieses", "diesem", "diesen", "mein", "meine",
                "meinen", "meinem", "meiner", "meines", "dein", "deine", "deinen", "deinem", "deiner", "unser", "unsere",
                "unseren", "unserem", "unserer", "euer", "eure", "euren", "ihre", "ihren", "ihrem", "ihrer", "sein",
                "seine", "seinen", "seinem", "seiner", "jene", "jener", "jenes", "jenen"});
    add(W_ART, {"a", "an", "ein", "eine", "einen", "einem", "einer", "eines"});
    add(W_SUBJ, {"i", "we", "they", "he", "she", "it", "ich", "wir", "er", "sie", "es", "man", "ll", "ve", "d", "m"});
    add(W_MODALQ, {"can", "could", "would", "will", "shall", "kannst", "können", "könnten", "könntest", "würdest",
                   "würden", "magst", "möchtest", "kann"});
    add(W_YOU, {"you", "du", "sie", "ihr"});
    add(W_PLEASE, {"please", "pls", "plz", "kindly", "bitte"});
    add(W_FRAME, {"as", "in", "into", "inside", "within", "using", "als", "im", "ins"});
    add(W_WITH, {"with", "mit"});
    add(W_STRONG, {"give", "provide", "show", "send", "write", "create", "make", "produce", "generate", "return",
                   "output", "draft", "prepare", "compile", "format", "structure", "organize", "organise", "present",
                   "put", "respond", "reply", "answer", "summarize", "summarise", "convert",
                   "render", "display", "deliver", "gib", "gebt", "zeig", "zeige", "schick", "schicke", "sende",
                   "liefere", "schreib", "schreibe", "erstelle", "mach", "mache", "erzeuge", "generiere", "formatiere",
                   "gliedere", "strukturiere", "antworte", "stelle", "setze", "fasse", "bring", "bringe", "ordne",
                   "gestalte", "präsentiere", "wandle", "verwandle", "teile"});
    add(W_STRONG_INDEF, {"use", "include", "add", "insert", "employ", "nutze", "verwende", "benutze", "füge", "ergänze"});
    add(W_DE_INF, {"geben", "zeigen", "schicken", "senden", "liefern", "schreiben", "erstellen", "machen", "erzeugen",
                   "generieren", "formatieren", "gliedern", "strukturieren", "antworten", "stellen", "fassen",
                   "nutzen", "verwenden", "benutzen", "erklären", "beschreiben", "nennen"});
    add(W_WEAK, {"need", "want", "prefer", "like", "brauche", "bräuchte", "möchte", "hätte", "wünsche"});
    add(W_FINAL, {"geben", "zeigen", "schicken", "senden", "liefern", "schreiben", "erstellen", "machen", "erzeugen",
                  "generieren", "formatieren", "gliedern", "strukturieren", "ausgeben", "darstellen", "auflisten",
                  "aufzählen", "verwenden", "nutzen", "benutzen", "zusammenfassen", "aufbereiten", "aufschreiben",
                  "erhalten", "bekommen", "haben"});
    add(W_EXPLAIN, {"explain", "describe", "outline", "tell", "walk", "erkläre", "erklär", "erläutere", "beschreibe",
                    "skizziere", "nenne", "nenn"});
    add(W_EXPLAIN_FINAL, {"erklären", "erläutern", "beschreiben", "nennen", "skizzieren"});
    add(W_ANSWER, {"answer", "answers", "response", "responses", "reply", "output", "antwort", "ausgabe", "result",
                   "ergebnis"});
    add(W_MODALN, {"must", "should", "shall", "muss", "müssen", "soll", "sollte", "sollten", "sollen", "sollst"});
    add(W_LABEL, {"format", "output", "ausgabe", "ausgabeformat", "antwortformat", "formatting", "formatierung",
                  "struktur", "structure", "layout", "form"});
    add(W_QWORD, {"what", "which", "welche", "welcher", "welches", "was", "wie"});
    add(W_COORD, {"and", "und", "or", "oder", "sowie", "then", "dann", "danach", "plus", "also", "außerdem", "anschließend"});
    add(W_PAST, {"did", "took", "taken", "done", "had", "hast", "habt", "hatte", "hattest", "hatten", "habe",
                 "gemacht", "unternommen", "befolgt", "followed", "tried", "versucht"});
    add(W_CODEART, {"code", "codes", "script", "scripts", "skript", "skripte", "skripts", "snippet", "snippets",
                    "function", "functions", "funktion", "funktionen", "program", "programs", "programm", "programme",
                    "command", "commands", "befehl", "befehle", "befehlen", "oneliner", "einzeiler", "liner",
                    "codeschnipsel", "codebeispiel", "beispielcode", "implementation", "implementierung"});
    add(W_LANG, {"python", "bash"});
    add(W_DB, {"sql", "database", "databases", "datenbank", "datenbanken", "postgres", "postgresql", "mysql", "sqlite",
               "db", "dataframe", "dataframes"});
    add(W_LISTVERB, {"list", "enumerate", "itemize", "itemise"});
    return t;
  }();
  return m;
}

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Number words (DE/EN). needs_modifier: "one"/"ein…" are numbers only after "exactly", "genau", "at most" …
int number_word(std::string_view w, bool &needs_modifier) {
  static const std::unordered_map<std::string_view, int> m{
      {"one", 1},        {"two", 2},        {"three", 3},      {"four", 4},        {"five", 5},       {"six", 6},
      {"seven", 7},      {"eight", 8},      {"nine", 9},       {"ten", 10},        {"eleven", 11},    {"twelve", 12},
      {"thirteen", 13},  {"fourteen", 14},  {"fifteen", 15},   {"sixteen", 16},    {"seventeen", 17}, {"eighteen", 18},
      {"nineteen", 19},  {"twenty", 20},    {"eins", 1},       {"ein", 1},         {"eine", 1},       {"einen", 1},
      {"einem", 1},      {"einer", 1},      {"zwei", 2},       {"zwo", 2},         {"drei", 3},       {"vier", 4},
      {"fünf", 5},       {"sechs", 6},      {"sieben", 7},     {"acht", 8},        {"neun", 9},       {"zehn", 10},
      {"elf", 11},       {"zwölf", 12},     {"dreizehn", 13},  {"vierzehn", 14},   {"fünfzehn", 15},  {"sechzehn", 16},
      {"siebzehn", 17},  {"achtzehn", 18},  {"neunzehn", 19},  {"zwanzig", 20}};
  needs_modifier = false;
  if (!w.empty() && w.size() <= 3 && std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int v = 0;
    for (char c : w) v = v * 10 + (c - '0');
    return v >= 1 ? v : -1;
  }
  auto it = m.find(w);
  if (it == m.end()) return -1;
  needs_modifier = it->second == 1;
  return it->second;
}

// Form nouns: the format a token (and maybe the next one) names, -1 if none.
enum : unsigned { N_WITH_OK = 1, N_DEF_WITH_OK = 2, N_COUNTED_ONLY = 4 };
struct Noun {
  int fmt = -1;
  unsigned flags = 0;
  std::size_t span = 1;
};
Noun form_noun(const TokenizedText &t, std::size_t i) {
  std::string_view w = t.token(i);
  std::string_view nx = i + 1 < t.size() ? t.token(i + 1) : std::string_view{};
  Noun n;
  auto set = [&](int f, unsigned fl = 0, std::size_t span = 1) {
    n.fmt = f;
    n.flags = fl;
    n.span = span;
    return n;
  };
  if (w.empty()) return n;
  switch (w[0]) {
    case 'a':
      if (starts(w, "aufzählung") || starts(w, "auflistung")) return set(kFmtList);
      if (w == "arbeitsschritte" || w == "arbeitsschritten") return set(kFmtSteps);
      break;
    case 'b':
      if (w == "bullet") {
        if (nx == "point" || nx == "points" || nx == "list" || nx == "lists") return set(kFmtList, N_WITH_OK, 2);
        return set(kFmtList, N_WITH_OK);
      }
      if (w == "bulleted") return set(kFmtList, N_WITH_OK, nx == "list" || nx == "lists" ? 2 : 1);
      if (w == "bullets" || w == "bulletpoints") return set(kFmtList, N_WITH_OK);
      break;
    case 'c':
      if (starts(w, "checklist")) return set(kFmtList);
      if (w == "columns") return set(kFmtTable, N_WITH_OK | N_DEF_WITH_OK);
      if (starts(w, "codebl")) return set(kFmtCode, N_WITH_OK);
      if (w == "code" && (nx == "block" || nx == "blocks" || nx == "fence" || nx == "fences")) return set(kFmtCode, N_WITH_OK, 2);
      break;
    case 'e':
      if (w == "entries" || w == "einträge" || w == "einträgen" || w == "elemente" || w == "elementen") return set(kFmtList, N_COUNTED_ONLY | N_WITH_OK);
      if (w == "einzelschritte" || w == "einzelschritten") return set(kFmtSteps);
      break;
    case 'f':
      if (w == "fenced" && nx == "code") return set(kFmtCode, N_WITH_OK, 2);
      break;
    case 'h':
      if (w == "heading" || w == "headings") return set(kFmtHeadings, N_WITH_OK);
      if (w == "handlungsschritte" || w == "handlungsschritten") return set(kFmtSteps);
      break;
    case 'i':
      if (w == "items") return set(kFmtList, N_COUNTED_ONLY | N_WITH_OK);
      break;
    case 'j':
      if (w == "json" || w == "jsonschema") return set(kFmtJson);
      break;
    case 'l':
      if (w == "list" || w == "lists" || w == "liste" || w == "listenform") return set(kFmtList);
      if (starts(w, "listenpunkt")) return set(kFmtList, N_WITH_OK);
      break;
    case 'p':
      if (w == "punkt" || w == "punkte" || w == "punkten" || w == "points") return set(kFmtList, N_COUNTED_ONLY | N_WITH_OK);
      break;
    case 's':
      if (w == "steps" || w == "schritte" || w == "schritten") return set(kFmtSteps);
      if (w == "spalten") return set(kFmtTable, N_WITH_OK | N_DEF_WITH_OK);
      if (starts(w, "stichpunkt") && w != "stichpunktartig") return set(kFmtList, N_WITH_OK);
      if (starts(w, "spiegelstrich")) return set(kFmtList, N_WITH_OK);
      break;
    case 't':
      if (w == "table" || w == "tables" || w == "tabelle" || w == "tabellen" || w == "tabellenform") return set(kFmtTable);
      break;
    default:
      break;
  }
  // UTF-8 initials (ü…) are not in the switch above.
  if (starts(w, "\xc3\xbc" "berschrift") || starts(w, "zwischen\xc3\xbc" "berschrift")) return set(kFmtHeadings, N_WITH_OK);
  return n;
}

// Nouns that a form noun modifies name something else: "JSON parser", "table tennis", "table of contents".
bool modifier_use(int fmt, std::string_view w, std::string_view nx, std::string_view nx2) {
  if (fmt == kFmtJson)
    return w == "lines" || w == "parser" || w == "parsers" || w == "parsing" || w == "parse" || w == "parsen" ||
           w == "library" || w == "libraries" || w == "lib" || w == "module" || w == "modul" || w == "package" ||
           w == "decoder" || w == "encoder" || w == "serializer" || w == "serialization" || w == "bibliothek";
  if (fmt == kFmtList)
    return w == "comprehension" || w == "comprehensions" || w == "price" || w == "prices" || w == "view" ||
           w == "method" || w == "methods" || w == "type";
  if (fmt == kFmtTable)
    return w == "tennis" || w == "salt" || w == "manners" || w == "cloth" || w == "top" || w == "tops" ||
           w == "spoon" || w == "wine" || w == "football" || w == "lamp" || (w == "of" && nx == "contents") ||
           (w == "name" && nx2.empty());
  return false;
}

struct Tok {
  std::uint32_t flags = 0;
  int clause = 0, sentence = 0;
  bool boundary_after_colon = false;  // the gap after this token holds ':' (label)
  bool newline_after = false;
};

// Nouns after a number that measure something rather than name the items of a list.
bool is_unit_word(std::string_view w) {
  static const std::unordered_set<std::string_view> units{
      "million", "millions", "millionen", "billion", "billions", "milliarde", "milliarden", "thousand", "thousands",
      "tausend", "hundred", "hundert", "percent", "prozent", "euro", "euros", "eur", "dollar", "dollars", "usd",
      "year", "years", "jahr", "jahre", "jahren", "month", "months", "monat", "monate", "monaten", "week", "weeks",
      "woche", "wochen", "day", "days", "tag", "tage", "tagen", "hour", "hours", "stunde", "stunden", "minute",
      "minutes", "minuten", "second", "seconds", "sekunden", "word", "words", "wort", "wörter", "wörtern",
      "sentence", "sentences", "satz", "sätze", "sätzen", "character", "characters", "zeichen", "paragraph",
      "paragraphs", "absatz", "absätze", "absätzen", "page", "pages", "seite", "seiten", "times", "mal"};
  return units.count(w) > 0;
}

struct Scanner {
  const char *source;
  std::string_view raw;
  const TokenizedText &t;
  FormatRequests &out;
  std::vector<Tok> tk;
  std::vector<bool> sent_question, sent_request, sent_codeart, sent_db;
  std::vector<int> clause_start;  // token index where each clause starts
  std::vector<bool> matched_noun;
  std::vector<std::pair<int, std::size_t>> raised_in;  // (format, sentence) of every request of this source
  struct Pending {
    int fmt;
    std::size_t i, end;
  };
  std::vector<Pending> pending;  // counted item nouns without a request of their own ("Nenne 5 Punkte als Liste")

  Scanner(const char *s, std::string_view r, const TokenizedText &tt, FormatRequests &o) : source(s), raw(r), t(tt), out(o) {}

  std::string_view gap(std::size_t a, std::size_t b) const {  // text between token a's end and token b's start
    std::size_t ge = b < t.size() ? t.tokens[b].off : t.lowered.size();
    std::size_t gb = t.tokens[a].off + t.tokens[a].len;
    return std::string_view(t.lowered).substr(gb, ge - gb);
  }
  std::uint32_t fl(std::size_t i) const { return tk[i].flags; }
  std::string_view tok(std::size_t i) const { return i < t.size() ? t.token(i) : std::string_view{}; }
  bool same_clause(std::size_t a, std::size_t b) const { return tk[a].clause == tk[b].clause; }

  void prepare() {
    const auto &wt = word_table();
    const std::size_t n = t.size();
    tk.resize(n);
    matched_noun.assign(n, false);
    int clause = 0, sentence = 0;
    clause_start.push_back(0);
    sent_question.push_back(false);
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) {
        std::string_view g = gap(i - 1, i);
        bool sent_end = g.find_first_of(".!?\n") != std::string_view::npos;
        bool clause_end = sent_end || g.find_first_of(",;:()[]\"") != std::string_view::npos;
        tk[i - 1].boundary_after_colon = g.find(':') != std::string_view::npos;
        tk[i - 1].newline_after = g.find('\n') != std::string_view::npos;
        if (sent_end) {
          sent_question.back() = g.find('?') != std::string_view::npos;
          ++sentence;
          sent_question.push_back(false);
        }
        if (clause_end) {
          ++clause;
          clause_start.push_back(static_cast<int>(i));
        }
      }
      tk[i].clause = clause;
      tk[i].sentence = sentence;
      auto it = wt.find(t.token(i));
      tk[i].flags = it == wt.end() ? 0 : it->second;
    }
    if (n > 0) {
      std::string_view tail = gap(n - 1, n);
      sent_question.back() = tail.find('?') != std::string_view::npos;
    }
    const std::size_t ns = static_cast<std::size_t>(sentence) + 1;
    sent_request.assign(ns, false);
    sent_codeart.assign(ns, false);
    sent_db.assign(ns, false);
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = static_cast<std::size_t>(tk[i].sentence);
      if (fl(i) & W_PLEASE) sent_request[s] = true;
      // can you / kannst du / können Sie / could you please
      if ((fl(i) & W_MODALQ) && i + 1 < n && ((fl(i + 1) & W_YOU) || (i + 2 < n && (fl(i + 2) & W_YOU))) && same_clause(i, i + 1))
        sent_request[s] = true;
      if (fl(i) & W_CODEART) sent_codeart[s] = true;
      if (fl(i) & W_DB) sent_db[s] = true;
    }
  }

  bool negated(std::size_t i) const { return detect::negated_before(t, i); }

  // A verb at j reads as a request: not "I make …" / "the output …" / "I want to make …".
  bool verb_is_request(std::size_t j) const {
    if (j == 0 || !same_clause(j - 1, j)) return true;
    std::uint32_t p = fl(j - 1);
    if (p & (W_DET | W_ART)) return false;  // a noun: "the output", "a list"
    if (p & W_SUBJ) return j >= 2 && same_clause(j - 2, j) && (fl(j - 2) & W_MODALQ);  // "can we make" yes, "I make" no
    if (tok(j - 1) == "to") return j >= 2 && (fl(j - 2) & W_YOU);                       // "want you to write" yes
    return true;
  }
  // "I learned it step by step", "ich habe das in einer Tabelle": a statement with its own subject and no
  // request or wish anywhere in the clause or sentence ("I'd like it as a table" is a wish, "Antworten Sie in
  // Stichpunkten" an imperative).
  bool declarative_statement(std::size_t i) const {
    const auto s = static_cast<std::size_t>(tk[i].sentence);
    if (sent_question[s] || sent_request[s]) return false;
    const auto c = tk[i].clause;
    bool subject = false;
    for (std::size_t j = static_cast<std::size_t>(clause_start[static_cast<std::size_t>(c)]); j < t.size() && tk[j].clause == c; ++j) {
      if ((fl(j) & (W_STRONG | W_STRONG_INDEF | W_EXPLAIN | W_LISTVERB)) && verb_is_request(j)) return false;
      if (fl(j) & (W_WEAK | W_MODALN)) return false;
      if (j < i && (fl(j) & W_SUBJ) && !(j > 0 && same_clause(j - 1, j) && (fl(j - 1) & (W_MODALQ | W_DE_INF)))) subject = true;
    }
    return subject;
  }
  // "as"/"als" as a frame, not in "such as", "as well as", "mehr als", "rather than".
  bool is_frame(std::size_t j) const {
    std::string_view w = tok(j);
    if (w != "as" && w != "als") return true;
    if (j == 0 || !same_clause(j - 1, j)) return true;
    std::string_view p = tok(j - 1);
    return !(p == "such" || p == "well" || p == "same" || p == "so" || p == "as" || p == "mehr" || p == "weniger" ||
             p == "lieber" || p == "besser" || p == "eher" || p == "anders" || p == "rather" || p == "more" || p == "less");
  }

  std::string phrase(std::size_t a, std::size_t b) const {  // tokens a..b (inclusive) of the lowered text
    std::size_t s = t.tokens[a].off, e = t.tokens[b].off + t.tokens[b].len;
    return std::string(text::utf8_prefix(std::string_view(t.lowered).substr(s, e - s), 80));
  }

  void raise(int fmt, std::size_t a, std::size_t b, bool task_verb = false) {
    raised_in.emplace_back(fmt, static_cast<std::size_t>(tk[std::max(a, b)].sentence));
    FormatRequest &f = out[static_cast<std::size_t>(fmt)];
    if (f.raised) {
      f.by_task_verb = f.by_task_verb && task_verb;
      return;
    }
    f.raised = true;
    f.by_task_verb = task_verb;
    f.evidence = std::string(source) + ": '" + phrase(a, b) + "'";
  }

  // ---- counts ----
  // The relation stated by the words before a number at j (and "N or more" after it); sets *from to the first
  // token of the phrase.
  CountRel relation_before(std::size_t j, int &n, std::size_t &from, bool &has_modifier) const {
    from = j;
    has_modifier = true;
    auto at = [&](std::size_t k, std::string_view w) { return k < t.size() && same_clause(k, j) && tok(k) == w; };
    std::string_view p1 = j >= 1 && same_clause(j - 1, j) ? tok(j - 1) : std::string_view{};
    std::string_view p2 = j >= 2 && same_clause(j - 2, j) ? tok(j - 2) : std::string_view{};
    std::string_view p3 = j >= 3 && same_clause(j - 3, j) ? tok(j - 3) : std::string_view{};
    // After the number: "3 or more", "drei oder weniger".
    if ((at(j + 1, "or") || at(j + 1, "oder")) && j + 2 < t.size()) {
      std::string_view q = tok(j + 2);
      if (q == "more" || q == "mehr") return CountRel::AtLeast;
      if (q == "fewer" || q == "less" || q == "weniger") return CountRel::AtMost;
    }
    if (p1 == "exactly" || p1 == "precisely" || p1 == "exakt" || p1 == "genau") { from = j - 1; return CountRel::Exact; }
    if (p1 == "mindestens" || p1 == "wenigstens" || p1 == "minimum" || p1 == "min") { from = j - 1; return CountRel::AtLeast; }
    if (p1 == "höchstens" || p1 == "maximal" || p1 == "max" || p1 == "maximum") { from = j - 1; return CountRel::AtMost; }
    if (p1 == "least" && p2 == "at") { from = j - 2; return CountRel::AtLeast; }
    if (p1 == "most" && p2 == "at") { from = j - 2; return CountRel::AtMost; }
    if (p1 == "to" && p2 == "up") { from = j - 2; return CountRel::AtMost; }
    if (p1 == "zu" && p2 == "bis") { from = j - 2; return CountRel::AtMost; }
    if (p1 == "of" && (p2 == "maximum" || p2 == "max")) { from = j - 2; return CountRel::AtMost; }
    if (p1 == "of" && (p2 == "minimum" || p2 == "min")) { from = j - 2; return CountRel::AtLeast; }
    if (p1 == "than" || p1 == "als") {
      bool neg = p3 == "no" || p3 == "not" || p3 == "nicht" || p3 == "kein" || p3 == "keine";
      if (p2 == "more" || p2 == "mehr") {
        from = neg ? j - 3 : j - 2;
        if (neg) return CountRel::AtMost;
        n += 1;  // more than 3 = at least 4
        return CountRel::AtLeast;
      }
      if (p2 == "fewer" || p2 == "less" || p2 == "weniger") {
        from = neg ? j - 3 : j - 2;
        if (neg) return CountRel::AtLeast;
        n -= 1;  // fewer than 3 = at most 2
        return CountRel::AtMost;
      }
    }
    has_modifier = false;
    return CountRel::Exact;
  }

  // A number token at j (digits or a number word), respecting "one"/"ein" needing a modifier.
  bool number_at(std::size_t j, int &n, CountRel &rel, std::size_t &from) const {
    bool needs_mod = false;
    n = number_word(tok(j), needs_mod);
    if (n < 1) return false;
    bool has_mod = false;
    rel = relation_before(j, n, from, has_mod);
    if (needs_mod && !has_mod) return false;
    return n >= 0;
  }

  void add_count(int fmt, CountRel rel, int n, std::size_t a, std::size_t b) {
    if (fmt != kFmtList && fmt != kFmtSteps) return;
    FormatRequest &f = out[static_cast<std::size_t>(fmt)];
    for (const auto &c : f.counts)
      if (c.rel == rel && c.n == n) return;
    f.counts.push_back({rel, n, phrase(a, b), source});
  }

  // A count right before a noun ("genau drei Punkte", "at least 5 bullet points", "3 or more steps", "top 3"),
  // or right after it ("a list of 5 items", "eine Liste mit drei Punkten"). Returns true when found.
  bool count_near_noun(int fmt, std::size_t i, std::size_t end) {
    // Before: up to 3 tokens back, skipping "or more"/"short"-like words (not determiners, not other numbers).
    for (std::size_t k = 1; k <= 4 && k <= i; ++k) {
      std::size_t j = i - k;
      if (!same_clause(j, i)) break;
      int n = 0;
      CountRel rel;
      std::size_t from = j;
      if (number_at(j, n, rel, from)) {
        add_count(fmt, rel, n, from, end);
        return true;
      }
      if (fl(j) & (W_DET | W_FRAME | W_STRONG | W_STRONG_INDEF | W_WITH)) break;
    }
    // After: "of/mit/von/with" + [modifier] + number.
    if (end + 1 < t.size() && same_clause(end, end + 1)) {
      std::string_view p = tok(end + 1);
      if (p == "of" || p == "mit" || p == "von" || p == "with" || p == "aus") {
        for (std::size_t j = end + 2; j < t.size() && j <= end + 5 && same_clause(j, end); ++j) {
          int n = 0;
          CountRel rel;
          std::size_t from = j;
          if (number_at(j, n, rel, from)) {
            add_count(fmt, rel, n, i, j + 1 < t.size() && same_clause(j + 1, end) ? j + 1 : j);  // "… mit maximal 5 punkten"
            return true;
          }
        }
      }
    }
    return false;
  }
  // A count after a list verb: "list three reasons", "list the top 3", "liste genau drei Gründe auf".
  void count_after_verb(int fmt, std::size_t v) {
    for (std::size_t j = v + 1; j < t.size() && j <= v + 5 && same_clause(j, v); ++j) {
      int n = 0;
      CountRel rel;
      std::size_t from = j;
      if (number_at(j, n, rel, from)) {
        std::size_t e = j + 1 < t.size() && same_clause(j + 1, v) ? j + 1 : j;
        add_count(fmt, rel, n, v, e);
        return;
      }
    }
  }

  // ---- request context of a form noun at i (ending at token `end`) ----
  // Returns the first token of the phrase that asked for it, or npos.
  std::size_t request_for(int fmt, const Noun &nn, std::size_t i, std::size_t end) const {
    constexpr std::size_t npos = static_cast<std::size_t>(-1);
    if (negated(i)) return npos;
    const std::string_view en_table = tok(i);
    const bool ambiguous_table = en_table == "table" || en_table == "tables";  // also furniture
    bool det_seen = false, coord_seen = false;
    for (std::size_t k = 1; k <= 6 && k <= i; ++k) {
      const std::size_t j = i - k;
      if (!same_clause(j, i)) break;
      const std::uint32_t f = fl(j);
      if (matched_noun[j] && coord_seen && k <= 5) return j;  // "eine Tabelle und danach JSON"
      if ((f & W_FRAME) && k <= 4 && !det_seen && is_frame(j) && !negated(j) && !declarative_statement(i)) return j;
      if ((f & W_WITH) && k <= 4 && (nn.flags & N_WITH_OK) && (!det_seen || (nn.flags & N_DEF_WITH_OK)) && !negated(j) &&
          !declarative_statement(i))
        return j;
      // A definite article after give/show names an existing table or JSON ("show me the table"); for lists and
      // steps it is the usual request ("give me the steps").
      if ((f & W_STRONG) && k <= 5 && (!det_seen || fmt == kFmtList || fmt == kFmtSteps) && verb_is_request(j) && !negated(j)) return j;
      if ((f & W_DE_INF) && k <= 5 && j + 1 < t.size() && tok(j + 1) == "sie" && j + 1 < i && !negated(j)) return j;
      if ((f & W_STRONG_INDEF) && k <= 5 && !det_seen && verb_is_request(j) && !negated(j)) return j;
      if ((f & W_WEAK) && k <= 3 && !det_seen && !ambiguous_table && !negated(j)) {
        bool ok = tok(j) != "like" || (j > 0 && (tok(j - 1) == "would" || tok(j - 1) == "d"));
        bool to_inf = false;  // "I want to know about …": the wish is a verb, not the form
        for (std::size_t q = j + 1; q < i; ++q) to_inf = to_inf || tok(q) == "to" || tok(q) == "zu";
        if (ok && !to_inf) return j;
      }
      // explain/nenne ask for steps ("erkläre die Schritte"), and for a list when they ask for a number of
      // points ("Nenne genau drei Punkte", "tell me 3 points"; a counted-only noun, checked by the caller).
      if ((f & W_EXPLAIN) && (fmt == kFmtSteps || (fmt == kFmtList && (nn.flags & N_COUNTED_ONLY))) && k <= 4 &&
          verb_is_request(j) && !negated(j))
        return j;
      if ((f & W_PLEASE) && k <= 5 && !det_seen) return j;  // "Bitte nicht mehr als drei Stichpunkte"
      if ((f & W_MODALN) && k <= 6) {
        for (std::size_t q = j; q-- > 0 && j - q <= 3 && same_clause(q, j);)
          if (fl(q) & W_ANSWER) return q;  // "your answer must contain …", "die Antwort soll … enthalten"
      }
      if ((f & W_QWORD) && fmt == kFmtSteps && k <= 3 && sent_question[static_cast<std::size_t>(tk[i].sentence)]) {
        bool past = false;
        for (std::size_t q = static_cast<std::size_t>(clause_start[static_cast<std::size_t>(tk[i].clause)]);
             q < t.size() && tk[q].clause == tk[i].clause; ++q)
          past = past || (fl(q) & W_PAST);
        if (!past) return j;  // "what are the steps?", "welche Schritte muss ich gehen?"
      }
      if (f & W_COORD) coord_seen = true;
      if (f & W_DET) det_seen = true;
    }
    // A label: "Output: a JSON object …", "Format: Liste".
    for (std::size_t k = 0; k <= 8 && k <= i; ++k) {
      const std::size_t j = i - k;
      if (k > 0 && tk[j].newline_after) break;
      if (k > 0 && (fl(j) & W_LABEL) && tk[j].boundary_after_colon) {
        bool sentence_break = false;
        for (std::size_t q = j + 1; q < i; ++q) sentence_break = sentence_break || tk[q].sentence != tk[j + 1].sentence;
        if (!sentence_break) return j;
      }
    }
    // German verb-final request: "Kannst du mir die Schritte erklären?", "Bitte eine Tabelle erstellen."
    const auto s = static_cast<std::size_t>(tk[i].sentence);
    if (sent_request[s]) {
      for (std::size_t j = end + 1; j < t.size() && j <= end + 3 && same_clause(j, i); ++j) {
        if ((fl(j) & W_FINAL) && !(ambiguous_table)) return j;
        if ((fl(j) & W_EXPLAIN_FINAL) && fmt == kFmtSteps) return j;
      }
    }
    return npos;
  }

  void run() {
    prepare();
    const std::size_t n = t.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::string_view w = tok(i);
      const std::uint32_t f = fl(i);
      // -- cues that ask by themselves --
      // step by step / Schritt für Schritt / schrittweise (not in "I learned it step by step")
      if ((w == "step" && tok(i + 1) == "by" && tok(i + 2) == "step") ||
          (w == "schritt" && tok(i + 1) == "f\xc3\xbcr" && tok(i + 2) == "schritt")) {
        if (!negated(i) && !declarative_statement(i)) {
          raise(kFmtSteps, i, i + 2);
          count_near_noun(kFmtSteps, i, i + 2);
        }
        i += 2;
        continue;
      }
      if (w == "schrittweise" && !negated(i) && !declarative_statement(i)) raise(kFmtSteps, i, i);
      if ((starts(w, "tabellarisch") || w == "tabular") && !negated(i) && !declarative_statement(i)) raise(kFmtTable, i, i);
      if (w == "stichpunktartig" && !negated(i) && !declarative_statement(i)) raise(kFmtList, i, i);
      // python / bash: a code cue of the seed where the sentence names a code artifact ("a Python function",
      // "der Bash-Befehl"); the language alone ("Is Python hard to learn?") asks for no code block.
      if ((f & W_LANG) && sent_codeart[static_cast<std::size_t>(tk[i].sentence)] && !negated(i)) raise(kFmtCode, i, i);
      // -- list verbs --
      if (f & W_LISTVERB) {
        std::string_view nx = tok(i + 1);
        bool clause_first = i == 0 || !same_clause(i - 1, i);
        bool after_req = i > 0 && same_clause(i - 1, i) &&
                         ((fl(i - 1) & (W_PLEASE | W_COORD)) || tok(i - 1) == "also" || tok(i - 1) == "just" ||
                          tok(i - 1) == "now" || tok(i - 1) == "briefly" || tok(i - 1) == "then");
        bool modal_you = false;  // can you list / could you please list / I want you to list
        for (std::size_t q = i; q-- > 0 && i - q <= 3 && same_clause(q, i);)
          if ((fl(q) & W_YOU) && (tok(i - 1) == "to" || (q > 0 && (fl(q - 1) & W_MODALQ)) || (fl(i - 1) & W_PLEASE))) modal_you = true;
        bool noun_next = nx == "of" || nx == "is" || nx == "was" || nx == "are" || nx == "were" || nx == "has" ||
                         nx == "had" || nx == "goes" || nx == "price" || nx.empty() || (i + 1 < n && !same_clause(i, i + 1));
        if ((clause_first || after_req || modal_you) && !noun_next && !negated(i)) {
          std::size_t e = i;
          while (e + 1 < n && e < i + 3 && same_clause(i, e + 1)) ++e;
          raise(kFmtList, i, e, true);
          matched_noun[i] = true;
          count_after_verb(kFmtList, i);
          continue;
        }
      }
      // German "Liste … auf" / "Zähle … auf" (imperative with the particle later in the sentence), and
      // "auflisten"/"aufzählen" in a request ("Kannst du die Tarife auflisten?", "Bitte alle aufzählen").
      if (w == "liste" || w == "zähle" || w == "zähl" || w == "listet") {
        bool clause_first = i == 0 || !same_clause(i - 1, i) ||
                            (fl(i - 1) & (W_PLEASE | W_COORD)) || tok(i - 1) == "du" || tok(i - 1) == "nun" || tok(i - 1) == "jetzt";
        std::string_view nx = tok(i + 1);
        bool noun_next = nx == "der" || nx == "des" || nx == "von" || nx == "ist" || nx == "war" || nx == "wird" ||
                         nx == "enthält" || nx == "mit" || nx == "für";
        if (clause_first && !noun_next && !negated(i)) {
          std::size_t auf = 0;
          for (std::size_t q = i + 1; q < n && tk[q].sentence == tk[i].sentence; ++q)
            if (tok(q) == "auf") auf = q;
          if (auf != 0) {
            raise(kFmtList, i, auf, true);
            matched_noun[i] = true;
            count_after_verb(kFmtList, i);
            continue;
          }
        }
      }
      if ((w == "auflisten" || w == "aufzählen" || w == "aufzulisten" || w == "aufzuzählen") && !negated(i) &&
          sent_request[static_cast<std::size_t>(tk[i].sentence)]) {
        std::size_t from = static_cast<std::size_t>(clause_start[static_cast<std::size_t>(tk[i].clause)]);
        raise(kFmtList, from, i, true);
        for (std::size_t q = from; q < i; ++q) {
          int cn = 0;
          CountRel rel;
          std::size_t cf = q;
          if (number_at(q, cn, rel, cf)) {
            add_count(kFmtList, rel, cn, cf, q + 1 < i ? q + 1 : q);
            break;
          }
        }
        continue;
      }
      // "top 3" in a request: a ranked list of that many items.
      if (w == "top" && i + 1 < n && same_clause(i, i + 1)) {
        bool nm = false;
        int cnt = number_word(tok(i + 1), nm);
        if (cnt >= 2) {
          Noun pseudo{kFmtList, 0, 1};
          std::size_t from = request_for(kFmtList, pseudo, i, i + 1);
          bool question = sent_question[static_cast<std::size_t>(tk[i].sentence)];
          bool qword = false;  // "what are the top 5 …?", "welche sind die Top 3 …?"
          for (std::size_t q = static_cast<std::size_t>(clause_start[static_cast<std::size_t>(tk[i].clause)]); q + 1 < i; ++q)
            qword = qword || ((fl(q) & W_QWORD) && (tok(q + 1) == "are" || tok(q + 1) == "were" || tok(q + 1) == "sind"));
          if (from == static_cast<std::size_t>(-1) && question && qword) from = i;  // "what are the top 5 …?"
          if (from != static_cast<std::size_t>(-1)) {
            raise(kFmtList, from, i + 1, true);
            add_count(kFmtList, CountRel::Exact, cnt, i, i + 1);
            matched_noun[i] = true;
          }
          ++i;
          continue;
        }
      }
      // -- form nouns asked for by the words around them --
      Noun nn = form_noun(t, i);
      if (nn.fmt < 0) continue;
      const std::size_t end = i + nn.span - 1;
      if (modifier_use(nn.fmt, tok(end + 1), tok(end + 2), tok(end + 3))) {
        i = end;
        continue;
      }
      if (nn.fmt == kFmtTable && sent_db[static_cast<std::size_t>(tk[i].sentence)] && tok(i) != "spalten" && tok(i) != "columns") {
        i = end;  // "create a table in Postgres": a database table
        continue;
      }
      std::size_t from = request_for(nn.fmt, nn, i, end);
      // Nouns such as "Punkte"/"points"/"items" name a list only when counted ("genau drei Punkte").
      if (from != static_cast<std::size_t>(-1) && (count_near_noun(nn.fmt, i, end) || !(nn.flags & N_COUNTED_ONLY))) {
        raise(nn.fmt, std::min(from, i), std::max(from, end));
        matched_noun[i] = true;
      } else if (from == static_cast<std::size_t>(-1) && (nn.fmt == kFmtList || nn.fmt == kFmtSteps) && !negated(i)) {
        pending.push_back({nn.fmt, i, end});
      }
      i = end;
    }
    // A counted noun in a sentence that asks for the format elsewhere: "Nenne mindestens 5 Punkte als Liste",
    // "Give 3 examples, as a bulleted list" — the count belongs to that list.
    for (const Pending &pd : pending) {
      const auto sent = static_cast<std::size_t>(tk[pd.i].sentence);
      for (const auto &[f, s] : raised_in)
        if (s == sent && (f == pd.fmt || (f == kFmtList && pd.fmt == kFmtList))) {
          count_near_noun(pd.fmt, pd.i, pd.end);
          break;
        }
    }
    // Any counted noun in a sentence that asks for a list or steps by its frame alone: "Nenne genau drei Vorteile
    // in Stichpunkten", "Give me 5 tips as a bulleted list" — the first "N <noun>" of that sentence counts its
    // items, unless the noun is a unit ("2 Jahre", "100 words") or the count qualifies something ("more than 2").
    for (const auto &[f, s] : raised_in) {
      if ((f != kFmtList && f != kFmtSteps) || !out[static_cast<std::size_t>(f)].counts.empty()) continue;
      for (std::size_t q = 0; q + 1 < t.size(); ++q) {
        if (static_cast<std::size_t>(tk[q].sentence) != s) continue;
        int cn = 0;
        CountRel rel;
        std::size_t cf = q;
        if (!number_at(q, cn, rel, cf)) continue;
        bool nm = false;
        const std::string_view nx = tok(q + 1), before = q > 0 ? tok(q - 1) : std::string_view{};
        if (static_cast<std::size_t>(tk[q + 1].sentence) != s || !same_clause(q, q + 1) || number_word(nx, nm) > 0 ||
            is_unit_word(nx) || before == "than" || before == "als" || cn < 2 || cn > 100)
          break;
        add_count(f, rel, cn, cf, q + 1);
        break;
      }
    }
  }
};

// Whether any token can start a request at all (a form noun, a list verb, a cue): most prompts have none, and
// then the scanner's per-token tables are not built.
bool has_candidate(const text::TokenizedText &t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (form_noun(t, i).fmt >= 0) return true;
    std::string_view w = t.token(i);
    if (w == "list" || w == "enumerate" || w == "itemize" || w == "itemise" || w == "liste" || w == "listet" ||
        w == "z\xc3\xa4hle" || w == "z\xc3\xa4hl" || w == "auflisten" || w == "aufz\xc3\xa4hlen" || w == "aufzulisten" ||
        w == "aufzuz\xc3\xa4hlen" || w == "top" || w == "python" || w == "bash" || w == "step" || w == "schritt" ||
        w == "schrittweise" || w == "stichpunktartig" || w == "tabular" || starts(w, "tabellarisch"))
      return true;
  }
  return false;
}

}  // namespace

const char *count_rel_name(CountRel r) {
  switch (r) {
    case CountRel::Exact: return "exactly";
    case CountRel::AtLeast: return "at least";
    case CountRel::AtMost: return "at most";
  }
  return "exactly";
}

bool count_holds(CountRel r, int requested, int found) {
  switch (r) {
    case CountRel::Exact: return found == requested;
    case CountRel::AtLeast: return found >= requested;
    case CountRel::AtMost: return found <= requested;
  }
  return false;
}

void detect_format_requests(const char *source_name, std::string_view raw, const text::TokenizedText &t, FormatRequests &out) {
  if (t.size() == 0 || !has_candidate(t)) return;
  Scanner s(source_name, raw, t, out);
  s.run();
}

}  // namespace ksodi
