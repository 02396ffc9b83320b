#include "ksodi_measures/k0.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ksodi/detect.hpp"
#include "ksodi/format_requests.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

using detect::KeywordSet;

namespace {

// Keyword lists (versioned with detect::kDetectorVersion).
const KeywordSet &kw_goal() {
  static const KeywordSet k{
      // German task verbs (imperative and infinitive by prefix)
      "analy*", "erkläre*", "erklär", "erläuter*", "liste", "listet", "auflist*", "berechne*", "vergleiche*", "fasse",
      "zusammenfass*", "beschreibe*", "erstelle*", "schreibe*", "übersetze*", "prüfe*", "überprüfe*", "bewerte*",
      "formuliere*", "korrigiere*", "identifiziere*", "extrahiere*", "klassifiziere*", "nenne*", "gib", "hilf",
      "beantworte*", "finde*", "lies", "zeig", "baue*", "installiere*", "konfiguriere*", "ermittle*", "optimiere*", "entwirf", "entwerfe*", "begründe*", "empfiehl", "schlage",
      "zeige*", "definiere*", "kategorisiere*", "bestimme*", "löse*", "behebe*", "konvertiere*", "generiere*",
      // English task verbs
      "explain*", "list", "summari*", "calculate*", "compute*", "compare*", "describe*", "write*", "create*",
      "generate*", "translate*", "review*", "evaluate*", "classify*", "extract*", "identify*", "answer*", "find*",
      "fix*", "debug*", "draft*", "recommend*", "suggest*", "outline*", "determine*", "convert*", "help", "tell me",
      "show me", "check*", "assess*", "rewrite*", "refactor*", "implement*", "solve*", "resolve*", "provide*",
      "give me", "read", "show", "build*", "configure*", "install*", "set up"};
  return k;
}
const KeywordSet &kw_role() {
  static const KeywordSet k{"du bist", "sie sind ein", "sie sind eine", "ihr seid", "in der rolle", "in der funktion",
                            "rolle:", "persona", "you are a", "you are an", "you are the", "you re a", "you re an",
                            "act as", "acting as", "your role", "in the role", "role:"};
  return k;
}
// "als <Rolle>" / "as a <role>": a token within the next three that contains a role noun (German compounds:
// "Steuerberater", "Softwareentwickler", "Support-Mitarbeiter").
const std::vector<std::string_view> &role_nouns() {
  static const std::vector<std::string_view> v{
      "assistent", "assistant", "berater", "experte", "expertin", "expert", "entwickler", "developer", "engineer",
      "ingenieur", "gutachter", "reviewer", "prüfer", "analyst", "tutor", "lehrer", "teacher", "coach", "support",
      "kundenservice", "kundendienst", "agent", "mitarbeiter", "sachbearbeiter", "jurist", "anwalt", "anwält",
      "lawyer", "redakteur", "editor", "lektor", "übersetzer", "translator", "arzt", "ärztin", "doctor", "architekt",
      "architect", "auditor", "spezialist", "specialist", "consultant", "advisor", "adviser", "moderator", "chatbot",
      "helpdesk", "trainer", "mentor", "recruiter", "manager", "writer", "vertreter", "representative", "personaler",
      "tester", "administrator", "verkäufer", "bibliothekar", "lehrkraft", "fachkraft"};
  return v;
}
const KeywordSet &kw_data() {
  static const KeywordSet k{"beispiel:", "beispiele:", "example:", "examples:", "input:", "eingabe:", "daten:",
                            "data:", "kontext:", "context:", "text:", "e-mail:", "email:", "log:", "fehlermeldung:",
                            "error:", "folgende text", "folgenden text", "folgende daten", "folgenden daten",
                            "following text", "following data", "following code", "folgenden code", "hier ist",
                            "here is", "here are", "anbei", "attached", "im anhang", "```"};
  return k;
}
const KeywordSet &kw_constraints() {
  static const KeywordSet k{
      "nur", "maximal", "max", "mindestens", "höchstens", "kein", "keine", "keinen", "keinesfalls", "niemals",
      "ausschließlich", "darf", "dürfen", "muss", "müssen", "verboten", "nicht mehr als", "format:", "regel:",
      "regeln:", "limit*", "only", "at most", "at least", "maximum", "minimum", "no more than", "never", "must",
      "do not", "don t", "avoid", "exactly", "rule:", "rules:", "constraint*", "forbidden", "not allowed"};
  return k;
}
// E: phrases and labels that state the output besides the formats S0 knows (those come from the shared format
// request detector, so a noun in passing — "the list was long" — does not count).
const KeywordSet &kw_expected() {
  static const KeywordSet k{
      "output:", "ausgabe:", "ausgabeformat", "antwortformat", "format:", "ergebnis:", "markdown", "csv", "yaml",
      "xml", "respond with", "respond in", "answer in", "reply in", "return a", "return the", "return only",
      "antworte in", "antworte mit", "in einem satz", "in einem absatz", "in one sentence", "in one paragraph",
      "response format", "output format", "expected output", "erwartete ausgabe", "result:"};
  return k;
}
const KeywordSet &kw_tools() {
  static const KeywordSet k{"tool", "tools", "werkzeug*", "function call*", "function calling", "funktionsaufruf*",
                            "api", "websuche", "web search", "search tool", "code interpreter", "calculator",
                            "taschenrechner", "datenbankabfrage*", "plugin*"};
  return k;
}

// Words that do not name what a question asks about (DE/EN): pronouns, articles, particles, auxiliaries and
// modals, light verbs (do, go, mean, tun, machen, passiert), question words, conjunctions, prepositions,
// interjections and vague nouns (thing, Sache). A question with any other word names its subject.
bool function_word(std::string_view w) {
  static const std::unordered_set<std::string_view> exact{
      // English
      "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "he", "him", "his", "she", "her", "hers",
      "it", "its", "itself", "we", "us", "our", "ours", "they", "them", "their", "theirs", "this", "that", "these",
      "those", "there", "here", "what", "which", "who", "whom", "whose", "why", "how", "when", "where", "whether",
      "a", "an", "the", "and", "or", "but", "so", "then", "now", "just", "also", "too", "again", "still", "yet",
      "already", "about", "with", "of", "to", "for", "from", "in", "on", "at", "by", "as", "into", "over", "after",
      "before", "up", "down", "out", "off", "than", "if", "is", "am", "are", "was", "were", "be", "been", "being",
      "do", "does", "did", "done", "doing", "have", "has", "had", "having", "can", "could", "will", "would",
      "shall", "should", "may", "might", "must", "not", "no", "yes", "yeah", "yep", "nope", "ok", "okay", "oh",
      "well", "hmm", "hm", "huh", "wow", "lol", "really", "right", "sure", "please", "thanks", "thank", "s", "t",
      "re", "ve", "ll", "d", "m", "one", "ones", "thing", "things", "stuff", "something", "anything", "everything",
      "nothing", "else", "more", "less", "some", "any", "all", "both", "each", "other", "another", "such", "same",
      "very", "much", "many", "mean", "meant", "think", "say", "said", "know", "go", "going", "goes", "get", "got",
      "happen", "happened", "happens", "hey", "hi", "hello", "like", "way", "though", "anyway", "exactly", "either",
      "neither", "only", "even",
      // evaluations that answer the previous turn ("Great. You?", "That is insane. How could that happen?")
      "good", "great", "cool", "nice", "fine", "awesome", "interesting", "true", "sad", "funny", "amazing", "insane",
      "crazy", "wonderful", "terrible", "bad", "perfect", "correct", "wrong", "weird", "strange", "glad", "sorry",
      // German
      "ich", "mich", "mir", "du", "dich", "dir", "er", "ihn", "ihm", "sie", "ihr", "es", "wir", "uns", "euch",
      "man", "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "eines", "und",
      "oder", "aber", "doch", "denn", "dann", "jetzt", "nun", "noch", "schon", "auch", "nur", "so", "da", "dort",
      "hier", "damit", "dazu", "davon", "darüber", "daran", "darauf", "dafür", "dabei", "dagegen", "danach",
      "davor", "darum", "deshalb", "dran", "drauf", "was", "wer", "wen", "wem", "wessen", "wie", "wo", "wann",
      "warum", "wieso", "weshalb", "woher", "wohin", "womit", "wozu", "worüber", "woran", "worum", "ob", "ist",
      "bin", "bist", "sind", "seid", "war", "waren", "wäre", "wären", "sein", "hat", "habe", "hast", "haben",
      "habt", "hatte", "hätte", "wird", "werde", "wirst", "werden", "wurde", "kann", "kannst", "können", "könnte",
      "muss", "musst", "müssen", "soll", "sollte", "sollen", "darf", "will", "willst", "möchte", "mag", "tun",
      "tut", "tue", "machen", "macht", "mache", "gehen", "geht", "los", "passiert", "meinst", "meint", "sagst",
      "sagen", "weißt", "wissen", "gibt", "nicht", "ja", "nein", "na", "ach", "mal", "eigentlich", "etwa", "wohl",
      "bitte", "danke", "hallo", "genau", "echt", "wirklich", "etwas", "alles", "nichts", "mit", "von", "zu", "für",
      "über", "bei", "nach", "aus", "an", "auf", "im", "am", "um", "vor", "als", "bis", "ohne", "gegen", "sache",
      "sachen", "ding", "dinge", "ganze", "ganz", "sonst", "halt", "eben", "gerade", "immer", "trotzdem", "gut",
      "super", "toll", "schön", "interessant", "klar", "prima", "stimmt", "richtig", "falsch", "schade", "lustig",
      "komisch", "seltsam", "krass", "verrückt", "perfekt", "okay", "alles"};
  static constexpr std::string_view prefixes[] = {"mein", "dein", "sein", "unser", "euer", "eure", "ihr", "dies",
                                                  "jen", "welch", "kein"};
  if (w.size() <= 1) return true;
  if (std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; })) return true;  // "Und 5?"
  if (exact.count(w) != 0) return true;
  for (std::string_view p : prefixes)
    if (w.substr(0, p.size()) == p && w.size() <= p.size() + 2) return true;  // meinen, dieser, welches, keine
  return false;
}

// Z by a question: a sentence of the user text ending in '?' that names what it asks about — a content word in
// the question, or (for "Mein Router blinkt rot. Was soll ich tun?") in a sentence of this user text before it.
// A question made only of function words ("Und was ist damit?", "What about that?", "Why?") refers to
// something outside this unit and names no task.
bool question_goal(const text::TokenizedText &t, std::string &ev) {
  const std::string_view low(t.lowered);
  struct Sent {
    std::size_t first, last;  // token range
    bool question;
  };
  std::vector<Sent> sents;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (sents.empty() || sents.back().last + 1 != i) sents.push_back({i, i, false});
    sents.back().last = i;
    std::size_t gb = t.tokens[i].off + t.tokens[i].len;
    std::size_t ge = i + 1 < t.size() ? t.tokens[i + 1].off : low.size();
    std::string_view gap = low.substr(gb, ge - gb);
    if (gap.find_first_of(".!?\n") != std::string_view::npos) {
      sents.back().question = gap.find('?') != std::string_view::npos;
      sents.push_back({i + 1, i, false});  // closed: the next token opens a new sentence
    }
  }
  if (!sents.empty() && sents.back().first > sents.back().last) sents.pop_back();
  auto snippet = [&](const Sent &s) {
    std::size_t b = t.tokens[s.first].off, e = t.tokens[s.last].off + t.tokens[s.last].len;
    std::size_t q = low.find('?', e);
    if (q != std::string_view::npos && q - e <= 3) e = q + 1;
    return std::string(text::utf8_prefix(low.substr(b, e - b), 60));
  };
  auto content = [&](const Sent &s) -> std::string_view {
    for (std::size_t i = s.first; i <= s.last; ++i)
      if (!function_word(t.token(i))) return t.token(i);
    return {};
  };
  const Sent *empty_q = nullptr;
  std::string_view antecedent;  // a content word of a sentence before the question
  for (const Sent &s : sents) {
    std::string_view w = content(s);
    if (!s.question) {
      if (antecedent.empty()) antecedent = w;
      continue;
    }
    if (!w.empty()) {
      ev = "user_text: question '" + snippet(s) + "' names '" + std::string(w) + "'";
      return true;
    }
    if (!antecedent.empty()) {
      ev = "user_text: question '" + snippet(s) + "' about '" + std::string(antecedent) + "', named before it in the user text";
      return true;
    }
    if (empty_q == nullptr) empty_q = &s;
  }
  if (empty_q == nullptr) return false;
  ev = "no task verb; the question '" + snippet(*empty_q) +
       "' names nothing (only pronouns, particles, auxiliaries, question words) and the unit names no subject";
  return false;
}

bool tool_profile_given(const std::string &tp) {
  std::string t = text::to_lower(text::trim(tp));
  return !(t.empty() || t == "none" || t == "keine" || t == "n/a" || t == "-" || t == "null" || t == "[]" || t == "{}" ||
           t == "\"\"");
}

}  // namespace

namespace {

// One source of K0's components (system prompt, tool profile, user text), tokenized once.
struct Src {
  const char *name;
  std::string_view raw;
  text::TokenizedText t;
};

// The first source in which a keyword of `kw` occurs; `ev` says which and where.
bool first_hit(const KeywordSet &kw, std::initializer_list<const Src *> srcs, bool skip_neg, std::string &ev) {
  for (const Src *s : srcs) {
    if (const char *hit = kw.find(s->t, skip_neg)) {
      ev = std::string(s->name) + ": '" + hit + "'";
      return true;
    }
  }
  return false;
}

// R by "als"/"as" followed by a role noun within three tokens.
bool role_by_as(std::initializer_list<const Src *> srcs, std::string &ev) {
  for (const Src *s : srcs) {
    const text::TokenizedText &t = s->t;
    for (std::size_t i = 0; i < t.size(); ++i) {
      std::string_view w = t.token(i);
      if (w != "als" && w != "as") continue;
      for (std::size_t k = i + 1; k < t.size() && k <= i + 3; ++k) {
        std::string_view tok = t.token(k);
        for (std::string_view noun : role_nouns()) {
          if (tok.find(noun) != std::string_view::npos) {
            ev = std::string(s->name) + ": '" + std::string(w) + " … " + std::string(tok) + "'";
            return true;
          }
        }
      }
    }
  }
  return false;
}

// D: retrieved docs, or explicit inputs/examples (keywords, a quoted "> " block) in the user text or system prompt.
bool has_data(const K0Input &in, const Src &user, const Src &sys, std::string &ev) {
  if (in.n_docs > 0) {
    ev = "retrieved_docs: " + std::to_string(in.n_docs);
    return true;
  }
  if (first_hit(kw_data(), {&user, &sys}, false, ev)) return true;
  for (const Src *s : {&user, &sys}) {
    const std::string &low = s->t.lowered;
    if (low.rfind("> ", 0) == 0 || low.find("\n> ") != std::string::npos) {
      ev = std::string(s->name) + ": quoted input block";
      return true;
    }
  }
  ev = "no retrieved docs and no explicit input/example";
  return false;
}

// E: a format the context asks for (JSON, list, steps, table, code block, headings — the detector of S0's
// expectations: "als Tabelle", "in Stichpunkten", "answer in JSON", not "the list was long"), or a phrase or
// label that states the output ("Output:", "Antwortformat", "in one sentence", "respond with").
bool has_expected_form(std::initializer_list<const Src *> srcs, std::string &ev) {
  for (const Src *s : srcs) {
    if (s->raw.empty()) continue;
    FormatRequests req;
    detect_format_requests(s->name, s->raw, s->t, req);
    for (const FormatRequest &f : req) {
      if (!f.raised) continue;
      ev = f.evidence;
      return true;
    }
  }
  return first_hit(kw_expected(), srcs, false, ev);
}

}  // namespace

K0Result compute_k0(const K0Input &in, const K0Params &p) {
  K0Result r;
  Src sys{"system_prompt", in.system_prompt, {}}, tool{"tool_profile", in.tool_profile, {}}, user{"user_text", in.user_text, {}};
  sys.t.assign(in.system_prompt);
  tool.t.assign(in.tool_profile);
  user.t.assign(in.user_text);
  std::array<std::string, 6> &ev = r.evidence;
  // Z — goal: task verbs in the user text or the system prompt, or a question in the user text that names
  // what it asks about (not a bare follow-up such as "Und was ist damit?").
  r.present[0] = first_hit(kw_goal(), {&user, &sys}, false, ev[0]);
  if (!r.present[0] && in.user_text.find('?') != std::string::npos) r.present[0] = question_goal(user.t, ev[0]);
  if (!r.present[0] && ev[0].empty()) ev[0] = "no task verb or question in user_text/system_prompt";
  // R — role: explicit role phrases, or "als"/"as" followed by a role noun.
  r.present[1] = first_hit(kw_role(), {&sys, &tool, &user}, false, ev[1]) || role_by_as({&sys, &tool, &user}, ev[1]);
  if (!r.present[1]) ev[1] = "no role marker (du bist / you are / als <Rolle> / act as …)";
  // D — data.
  r.present[2] = has_data(in, user, sys, ev[2]);
  // C — constraints.
  r.present[3] = first_hit(kw_constraints(), {&sys, &tool, &user}, false, ev[3]);
  if (!r.present[3]) ev[3] = "no constraint keyword (nur, maximal, kein, Format:, only, at most, must …)";
  // E — expected output form.
  r.present[4] = has_expected_form({&sys, &tool, &user}, ev[4]);
  if (!r.present[4]) ev[4] = "no output form asked for (als JSON/Tabelle/Liste, in Schritten, Output: …)";
  // T — tools: a non-empty tool profile, or a tool named (not negated) in system prompt / user text.
  if (tool_profile_given(in.tool_profile)) {
    r.present[5] = true;
    ev[5] = "tool_profile: non-empty";
  } else {
    r.present[5] = first_hit(kw_tools(), {&sys, &user}, true, ev[5]);
    if (!r.present[5]) ev[5] = "empty tool profile and no tool named";
  }
  double num = 0, den = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    den += p.weights[i];
    num += r.present[i] ? p.weights[i] : 0.0;
  }
  r.K0 = den > 0 ? num / den : 0.0;
  r.not_interpretable = r.K0 < p.interpretable_min;
  r.label = r.not_interpretable ? "not_interpretable" : (r.K0 >= 1.0 - 1e-12 ? "complete" : "gaps");
  return r;
}

}  // namespace ksodi
