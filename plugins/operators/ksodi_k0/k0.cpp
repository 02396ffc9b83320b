#include "k0.hpp"

#include <vector>

#include "ksodi/detect.hpp"
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
const KeywordSet &kw_expected() {
  static const KeywordSet k{
      "json", "tabelle", "tabellarisch*", "liste", "listenform", "schritte", "stichpunkt*", "überschrift*",
      "output:", "ausgabe:", "ausgabeformat", "antwortformat", "format:", "ergebnis:", "markdown", "csv", "yaml",
      "xml", "table", "list", "steps", "bullet*", "heading*", "code block", "codeblock*", "respond with",
      "respond in", "answer in", "reply in", "return a", "return the", "return only", "antworte in", "antworte mit",
      "in einem satz", "in einem absatz", "in one sentence", "in one paragraph", "response format",
      "output format", "expected output", "erwartete ausgabe", "result:"};
  return k;
}
const KeywordSet &kw_tools() {
  static const KeywordSet k{"tool", "tools", "werkzeug*", "function call*", "function calling", "funktionsaufruf*",
                            "api", "websuche", "web search", "search tool", "code interpreter", "calculator",
                            "taschenrechner", "datenbankabfrage*", "plugin*"};
  return k;
}

bool tool_profile_given(const std::string &tp) {
  std::string t = text::to_lower(text::trim(tp));
  return !(t.empty() || t == "none" || t == "keine" || t == "n/a" || t == "-" || t == "null" || t == "[]" || t == "{}" ||
           t == "\"\"");
}

}  // namespace

K0Result compute_k0(const K0Input &in, const K0Params &p) {
  K0Result r;
  struct Src {
    const char *name;
    text::TokenizedText t;
  };
  Src sys{"system_prompt", {}}, tool{"tool_profile", {}}, user{"user_text", {}};
  sys.t.assign(in.system_prompt);
  tool.t.assign(in.tool_profile);
  user.t.assign(in.user_text);
  auto first_hit = [](const KeywordSet &kw, std::initializer_list<const Src *> srcs, bool skip_neg, std::string &ev) {
    for (const Src *s : srcs) {
      if (const char *hit = kw.find(s->t, skip_neg)) {
        ev = std::string(s->name) + ": '" + hit + "'";
        return true;
      }
    }
    return false;
  };
  std::array<std::string, 6> &ev = r.evidence;
  // Z — goal: task verbs in the user text or the system prompt, or a question in the user text.
  r.present[0] = first_hit(kw_goal(), {&user, &sys}, false, ev[0]);
  if (!r.present[0] && in.user_text.find('?') != std::string::npos) {
    r.present[0] = true;
    ev[0] = "user_text: question mark";
  }
  if (!r.present[0]) ev[0] = "no task verb or question in user_text/system_prompt";
  // R — role: explicit role phrases, or "als"/"as" followed by a role noun within three tokens.
  r.present[1] = first_hit(kw_role(), {&sys, &tool, &user}, false, ev[1]);
  if (!r.present[1]) {
    for (const Src *s : {&sys, &tool, &user}) {
      const text::TokenizedText &t = s->t;
      for (std::size_t i = 0; i < t.size() && !r.present[1]; ++i) {
        std::string_view w = t.token(i);
        if (w != "als" && w != "as") continue;
        for (std::size_t k = i + 1; k < t.size() && k <= i + 3 && !r.present[1]; ++k) {
          std::string_view tok = t.token(k);
          for (std::string_view noun : role_nouns()) {
            if (tok.find(noun) != std::string_view::npos) {
              r.present[1] = true;
              ev[1] = std::string(s->name) + ": '" + std::string(w) + " … " + std::string(tok) + "'";
              break;
            }
          }
        }
      }
      if (r.present[1]) break;
    }
  }
  if (!r.present[1]) ev[1] = "no role marker (du bist / you are / als <Rolle> / act as …)";
  // D — data: retrieved docs, or explicit inputs/examples in the user text or system prompt.
  if (in.n_docs > 0) {
    r.present[2] = true;
    ev[2] = "retrieved_docs: " + std::to_string(in.n_docs);
  } else {
    r.present[2] = first_hit(kw_data(), {&user, &sys}, false, ev[2]);
    if (!r.present[2]) {
      for (const Src *s : {&user, &sys}) {
        const std::string &low = s->t.lowered;
        if (low.rfind("> ", 0) == 0 || low.find("\n> ") != std::string::npos) {
          r.present[2] = true;
          ev[2] = std::string(s->name) + ": quoted input block";
          break;
        }
      }
    }
    if (!r.present[2]) ev[2] = "no retrieved docs and no explicit input/example";
  }
  // C — constraints.
  r.present[3] = first_hit(kw_constraints(), {&sys, &tool, &user}, false, ev[3]);
  if (!r.present[3]) ev[3] = "no constraint keyword (nur, maximal, kein, Format:, only, at most, must …)";
  // E — expected output form.
  r.present[4] = first_hit(kw_expected(), {&sys, &tool, &user}, false, ev[4]);
  if (!r.present[4]) ev[4] = "no output-form keyword (JSON, Tabelle, Liste, Schritte, Output: …)";
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
