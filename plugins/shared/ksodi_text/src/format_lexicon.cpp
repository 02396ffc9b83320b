// The DE/EN lexicon of the format-request scanner (format_lexicon.hpp).
#include "format_lexicon.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <unordered_set>
#include <vector>

namespace ksodi::lexicon {

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
    add(W_OBLIG, {"ensure", "sure", "required", "require", "requires", "needs", "necessary", "mandatory", "darf",
                  "dürfen", "achte", "achten", "verpflichtend"});
    add(W_EXAMPLE, {"such", "like", "e", "g", "z", "b", "example", "examples", "instance", "format", "formatted",
                    "template", "structure", "pattern", "follows", "folgt", "folgendermaßen", "beispiel",
                    "beispielsweise", "muster", "schema", "vorlage", "form"});
    add(W_EACH, {"each", "every", "per", "jede", "jeder", "jedes", "jeden", "jedem", "pro"});
    add(W_IMPER, {"limit", "keep", "restrict", "break", "split", "divide", "condense", "reduce", "boil", "narrow",
                  "beschr\xc3\xa4nke", "begrenze", "halte", "reduziere", "k\xc3\xbcrze", "teile", "zerlege"});
    return t;
  }();
  return m;
}

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

namespace {

// One form noun: a token (or, with `prefix`, the start of one) that names format `fmt`, where `next` is not empty
// only when the next token is one of `next` (and then span 2 takes it in). fmt -1: the token names no format
// although a later rule would say so ("stichpunktartig" is an adverb).
struct NounRule {
  std::string_view word;
  bool prefix;
  std::array<std::string_view, 5> next;
  int fmt;
  unsigned flags;
  std::size_t span;
};

constexpr unsigned kBulletItem = N_WITH_OK | N_ITEM | N_BULLET;
constexpr unsigned kCountedItem = N_COUNTED_ONLY | N_WITH_OK | N_ITEM;
constexpr bool kExact = false, kPrefix = true;

// The form nouns, tried in this order among those that start with the token's first byte; the first that fits
// names the format. LIST nouns are either items (N_ITEM) or containers (no N_ITEM), see Noun.
const NounRule kNounRules[] = {
    {"aufz\xc3\xa4hlungspunkt", kPrefix, {}, kFmtList, kBulletItem, 1},
    {"aufz\xc3\xa4hlungszeichen", kPrefix, {}, kFmtList, kBulletItem, 1},
    {"aufz\xc3\xa4hlung", kPrefix, {}, kFmtList, 0, 1},
    {"auflistung", kPrefix, {}, kFmtList, 0, 1},
    {"arbeitsschritte", kExact, {}, kFmtSteps, 0, 1},
    {"arbeitsschritten", kExact, {}, kFmtSteps, 0, 1},
    {"bullet", kExact, {"point", "points"}, kFmtList, kBulletItem, 2},
    {"bullet", kExact, {"list", "lists"}, kFmtList, N_WITH_OK | N_BULLET, 2},
    {"bullet", kExact, {}, kFmtList, kBulletItem, 1},
    {"bulleted", kExact, {"list", "lists"}, kFmtList, N_WITH_OK | N_BULLET, 2},
    {"bulleted", kExact, {"points", "items", "point", "item"}, kFmtList, kBulletItem, 2},
    {"bulleted", kExact, {}, kFmtList, N_WITH_OK | N_BULLET, 1},
    {"bullets", kExact, {}, kFmtList, kBulletItem, 1},
    {"bulletpoints", kExact, {}, kFmtList, kBulletItem, 1},
    {"bulletpoint", kExact, {}, kFmtList, kBulletItem, 1},
    {"checklist", kPrefix, {}, kFmtList, 0, 1},
    {"columns", kExact, {}, kFmtTable, N_WITH_OK | N_DEF_WITH_OK, 1},
    {"codebl", kPrefix, {}, kFmtCode, N_WITH_OK, 1},
    {"code", kExact, {"block", "blocks", "fence", "fences"}, kFmtCode, N_WITH_OK, 2},
    {"entries", kExact, {}, kFmtList, kCountedItem, 1},
    {"eintr\xc3\xa4ge", kExact, {}, kFmtList, kCountedItem, 1},
    {"eintr\xc3\xa4gen", kExact, {}, kFmtList, kCountedItem, 1},
    {"elemente", kExact, {}, kFmtList, kCountedItem, 1},
    {"elementen", kExact, {}, kFmtList, kCountedItem, 1},
    {"einzelschritte", kExact, {}, kFmtSteps, 0, 1},
    {"einzelschritten", kExact, {}, kFmtSteps, 0, 1},
    {"fenced", kExact, {"code"}, kFmtCode, N_WITH_OK, 2},
    {"heading", kExact, {}, kFmtHeadings, N_WITH_OK, 1},
    {"headings", kExact, {}, kFmtHeadings, N_WITH_OK, 1},
    {"handlungsschritte", kExact, {}, kFmtSteps, 0, 1},
    {"handlungsschritten", kExact, {}, kFmtSteps, 0, 1},
    {"items", kExact, {}, kFmtList, kCountedItem, 1},
    {"json", kExact, {}, kFmtJson, 0, 1},
    {"jsonschema", kExact, {}, kFmtJson, 0, 1},
    {"list", kExact, {"items", "item", "entries", "points", "point"}, kFmtList, N_WITH_OK | N_ITEM, 2},  // "exactly 3 list items"
    {"list", kExact, {}, kFmtList, 0, 1},
    {"lists", kExact, {}, kFmtList, 0, 1},
    {"liste", kExact, {}, kFmtList, 0, 1},
    {"listenform", kExact, {}, kFmtList, 0, 1},
    {"listenpunkt", kPrefix, {}, kFmtList, N_WITH_OK | N_ITEM, 1},
    {"listeneintr", kPrefix, {}, kFmtList, N_WITH_OK | N_ITEM, 1},
    {"punkt", kExact, {}, kFmtList, kCountedItem, 1},
    {"punkte", kExact, {}, kFmtList, kCountedItem, 1},
    {"punkten", kExact, {}, kFmtList, kCountedItem, 1},
    {"points", kExact, {}, kFmtList, kCountedItem, 1},
    {"steps", kExact, {}, kFmtSteps, 0, 1},
    {"schritte", kExact, {}, kFmtSteps, 0, 1},
    {"schritten", kExact, {}, kFmtSteps, 0, 1},
    {"spalten", kExact, {}, kFmtTable, N_WITH_OK | N_DEF_WITH_OK, 1},
    {"stichpunktartig", kExact, {}, -1, 0, 1},
    {"stichpunkt", kPrefix, {}, kFmtList, kBulletItem, 1},
    {"spiegelstrich", kPrefix, {}, kFmtList, kBulletItem, 1},
    {"table", kExact, {}, kFmtTable, 0, 1},
    {"tables", kExact, {}, kFmtTable, 0, 1},
    {"tabelle", kExact, {}, kFmtTable, 0, 1},
    {"tabellen", kExact, {}, kFmtTable, 0, 1},
    {"tabellenform", kExact, {}, kFmtTable, 0, 1},
    {"\xc3\xbc" "berschrift", kPrefix, {}, kFmtHeadings, N_WITH_OK, 1},
    {"zwischen\xc3\xbc" "berschrift", kPrefix, {}, kFmtHeadings, N_WITH_OK, 1},
};

// The rules of kNounRules by the first byte of their word, in their order.
const std::array<std::vector<const NounRule *>, 256> &noun_rules_by_first_byte() {
  static const std::array<std::vector<const NounRule *>, 256> by = [] {
    std::array<std::vector<const NounRule *>, 256> b;
    for (const NounRule &r : kNounRules) b[static_cast<unsigned char>(r.word[0])].push_back(&r);
    return b;
  }();
  return by;
}

// Whether w is one of the (non-empty) words of `words`.
bool one_of(std::string_view w, const std::array<std::string_view, 5> &words) {
  for (std::string_view x : words)
    if (!x.empty() && x == w) return true;
  return false;
}

}  // namespace

Noun form_noun(const text::TokenizedText &t, std::size_t i) {
  const std::string_view w = t.token(i);
  Noun n;
  if (w.empty()) return n;
  if (w == "lists" && i > 0) {  // "a paragraph that lists …", "it lists": a verb
    const std::string_view pv = t.token(i - 1);
    if (pv == "that" || pv == "which" || pv == "who" || pv == "it" || pv == "he" || pv == "she") return n;
  }
  const std::string_view nx = i + 1 < t.size() ? t.token(i + 1) : std::string_view{};
  for (const NounRule *r : noun_rules_by_first_byte()[static_cast<unsigned char>(w[0])]) {
    if (!(r->prefix ? starts(w, r->word) : w == r->word)) continue;
    if (!r->next[0].empty() && !one_of(nx, r->next)) continue;
    if (r->fmt >= 0) n = Noun{r->fmt, r->flags, r->span};
    return n;
  }
  return n;
}

bool modifier_use(int fmt, std::string_view w, std::string_view nx, std::string_view nx2) {
  if (fmt == kFmtJson)
    return w == "lines" || w == "parser" || w == "parsers" || w == "parsing" || w == "parse" || w == "parsen" ||
           w == "library" || w == "libraries" || w == "lib" || w == "module" || w == "modul" || w == "package" ||
           w == "decoder" || w == "encoder" || w == "serializer" || w == "serialization" || w == "bibliothek";
  if (fmt == kFmtList)
    return (w == "of" && (nx == "view" || nx == "views")) || w == "comprehension" || w == "comprehensions" || w == "price" || w == "prices" || w == "view" ||
           w == "method" || w == "methods" || w == "type";
  if (fmt == kFmtTable)
    return w == "tennis" || w == "salt" || w == "manners" || w == "cloth" || w == "top" || w == "tops" ||
           w == "spoon" || w == "wine" || w == "football" || w == "lamp" || (w == "of" && nx == "contents") ||
           (w == "name" && nx2.empty());
  return false;
}

bool is_unit_word(std::string_view w) {
  static const std::unordered_set<std::string_view> units{
      "million", "millions", "millionen", "billion", "billions", "milliarde", "milliarden", "thousand", "thousands",
      "tausend", "hundred", "hundert", "percent", "prozent", "euro", "euros", "eur", "dollar", "dollars", "usd",
      "year", "years", "jahr", "jahre", "jahren", "month", "months", "monat", "monate", "monaten", "week", "weeks",
      "woche", "wochen", "day", "days", "tag", "tage", "tagen", "hour", "hours", "stunde", "stunden", "minute",
      "minutes", "minuten", "second", "seconds", "sekunden", "word", "words", "wort", "wörter", "wörtern",
      "sentence", "sentences", "satz", "sätze", "sätzen", "character", "characters", "zeichen", "paragraph",
      "paragraphs", "absatz", "absätze", "absätzen", "page", "pages", "seite", "seiten", "times", "mal",
      // parts and marks of an answer that are not its list items: "at least 2 sections", "6 asterisks"
      "section", "sections", "abschnitt", "abschnitte", "abschnitten", "placeholder", "placeholders", "platzhalter",
      "asterisk", "asterisks", "sternchen", "letter", "letters", "buchstabe", "buchstaben", "highlight", "highlights",
      "keyword", "keywords", "title", "titles", "line", "lines", "zeile", "zeilen", "comma", "commas"};
  return units.count(w) > 0;
}

}  // namespace ksodi::lexicon
