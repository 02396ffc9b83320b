#include "o_t.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "ksodi_measures/cues.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

using nlohmann::json;

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Words that are never a key or a unit (articles, auxiliaries, copulas, prepositions, attribution words).
const std::set<std::string, std::less<>> &stopwords() {
  static const std::set<std::string, std::less<>> s{
      "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "und", "oder", "bis", "von",
      "vom", "zum", "zur", "mit", "für", "auf", "aus", "bei", "nach", "über", "unter", "ist", "sind", "war", "waren",
      "wird", "werden", "beträgt", "betragen", "betrug", "liegt", "liegen", "kostet", "kosten", "dauert", "dauern",
      "gilt", "gelten", "hat", "haben", "habe", "sich", "nur", "noch", "etwa", "circa", "rund", "maximal", "mindestens",
      "höchstens", "insgesamt", "jeweils", "pro", "je", "laut", "gemäß", "nicht", "auch", "wie", "sie", "ihr", "ihre",
      "ihren", "ihrem", "ihnen", "wir", "uns", "unser", "unsere", "the", "and", "for", "with", "from", "into", "are",
      "was", "were", "has", "have", "had", "costs", "cost", "takes", "take", "lasts", "last", "about", "around",
      "approximately", "only", "maximum", "minimum", "least", "most", "per", "each", "total", "according", "not",
      "also", "you", "your", "our", "its", "their", "this", "that", "these", "those", "than", "then", "within",
      "innerhalb", "after", "before", "nach", "vor", "seit", "since", "will", "would", "can", "could", "may", "kann",
      "können", "muss", "müssen", "bitte", "please", "now", "jetzt", "dann", "also", "genau", "exactly", "some",
      "einige", "mehr", "more", "less", "weniger", "than", "als", "to", "of", "in", "at", "on", "is", "be", "it", "es",
      "zu", "um", "an", "im", "am", "ca", "x", "says", "say", "said", "states", "stated", "shows", "sagt", "sagte",
      "steht", "stehen", "stand", "nennt", "zeigt", "gives", "ergibt", "macht", "makes"};
  return s;
}

std::string norm_unit(std::string w) {
  static const std::map<std::string, std::string, std::less<>> m{
      {"prozent", "%"}, {"percent", "%"}, {"%", "%"}, {"euro", "€"}, {"eur", "€"}, {"€", "€"},
      {"dollar", "$"}, {"dollars", "$"}, {"usd", "$"}, {"$", "$"}};
  if (auto it = m.find(w); it != m.end()) return it->second;
  return std::string(text::utf8_prefix(w, 4));
}

// "1.000" / "1,000" (separator + exactly 3 digits, one group or more) are thousands; otherwise the separator is
// the decimal point. With both kinds, the last one is the decimal point.
double parse_number(std::string s) {
  std::size_t dots = std::count(s.begin(), s.end(), '.'), commas = std::count(s.begin(), s.end(), ',');
  std::string out;
  if (dots > 0 && commas > 0) {
    char dec = s.find_last_of(".,") == s.rfind('.') ? '.' : ',';
    for (char c : s)
      if (is_digit(c)) out += c;
      else if (c == dec) out += '.';
  } else if (dots + commas > 0) {
    char sep = dots > 0 ? '.' : ',';
    bool thousands = true;
    std::size_t pos = s.find(sep);
    while (pos != std::string::npos) {
      std::size_t next = s.find(sep, pos + 1);
      std::size_t len = (next == std::string::npos ? s.size() : next) - pos - 1;
      if (len != 3) thousands = false;
      pos = next;
    }
    if (dots + commas > 1) thousands = true;
    for (char c : s)
      if (is_digit(c)) out += c;
      else if (!thousands) out += '.';
  } else {
    out = s;
  }
  return std::strtod(out.c_str(), nullptr);
}

bool clause_boundary(char c) { return c == '.' || c == '!' || c == '?' || c == ';' || c == ':' || c == ',' || c == '\n' || c == '(' || c == ')' || c == '|'; }

bool valid_key(std::string_view w) {
  if (w.size() < 3) return false;
  bool digits = std::all_of(w.begin(), w.end(), [](char c) { return is_digit(c); });
  return !digits && stopwords().find(w) == stopwords().end();
}

// "Abschnitt 3.1 erhalten", "section 4 says": a number right after a reference word is a reference, not a quantity.
bool after_reference_word(std::string_view s, std::size_t b) {
  static const std::set<std::string, std::less<>> refs{
      "abschnitt", "section", "kapitel", "kap", "chapter", "seite", "page", "p", "s", "nr", "nummer", "number", "no",
      "version", "v", "schritt", "step", "punkt", "point", "paragraph", "artikel", "article", "absatz", "abs",
      "ziffer", "zeile", "line", "tabelle", "table", "figure", "fig", "abb", "abbildung", "anlage", "annex", "anhang",
      "appendix", "doc", "dokument", "document", "quelle", "source", "ticket", "id", "§"};
  std::size_t e = b;
  while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '.')) --e;
  std::size_t a = e;
  while (a > 0) {
    std::size_t pc = text::prev_cp_start(s, a);
    text::Decoded d = text::decode(s, pc);
    if (!text::is_word_cp(d.cp) && d.cp != U'§') break;
    a = pc;
  }
  if (a == e) return false;
  return refs.count(text::to_lower(s.substr(a, e - a))) != 0;
}

}  // namespace

std::vector<Quantity> extract_quantities(std::string_view s) {
  std::vector<Quantity> out;
  std::size_t i = 0;
  const std::string euro = "\xE2\x82\xAC";
  while (i < s.size()) {
    if (!is_digit(s[i])) {
      ++i;
      continue;
    }
    // A digit glued to a word ("v1", "A4", "x86") is not a quantity; a currency sign right before is fine.
    const bool euro_before = i >= 3 && s.substr(i - 3, 3) == euro;
    const unsigned char prev = i > 0 ? static_cast<unsigned char>(s[i - 1]) : ' ';
    bool glued = !euro_before && (std::isalnum(prev) || prev == '_');
    if (!euro_before && prev >= 0x80) glued = text::is_word_cp(text::decode(s, text::prev_cp_start(s, i)).cp);
    std::size_t b = i;
    while (i < s.size() && (is_digit(s[i]) || ((s[i] == '.' || s[i] == ',') && i + 1 < s.size() && is_digit(s[i + 1])))) ++i;
    if (glued || after_reference_word(s, b)) continue;
    std::string num(s.substr(b, i - b));
    std::string unit;
    std::size_t e = i;
    // a currency sign before the number: "€ 12", "$20"
    std::size_t p = b;
    while (p > 0 && s[p - 1] == ' ') --p;
    if (p >= 3 && s.substr(p - 3, 3) == euro) unit = "€";
    else if (p >= 1 && s[p - 1] == '$') unit = "$";
    if (unit.empty()) {
      std::size_t j = i;
      if (j < s.size() && s[j] == ' ') ++j;
      else if (j + 1 < s.size() && static_cast<unsigned char>(s[j]) == 0xC2 && static_cast<unsigned char>(s[j + 1]) == 0xA0) j += 2;
      if (j < s.size() && s[j] == '%') {
        unit = "%";
        e = j + 1;
      } else if (s.substr(j, 3) == euro) {
        unit = "€";
        e = j + 3;
      } else if (j < s.size() && s[j] == '$') {
        unit = "$";
        e = j + 1;
      } else {
        std::size_t k = j;
        while (k < s.size()) {
          text::Decoded d = text::decode(s, k);
          if (!text::is_word_cp(d.cp) || (d.cp >= '0' && d.cp <= '9')) break;
          k += static_cast<std::size_t>(d.len);
        }
        if (k > j) {
          std::string w = text::to_lower(s.substr(j, k - j));
          if (stopwords().find(w) == stopwords().end()) {
            unit = w;
            e = k;
          }
        }
      }
    }
    if (unit.empty()) continue;
    Quantity q;
    q.unit = norm_unit(unit);
    q.value = parse_number(num);
    q.text = std::string(s.substr(b, e - b));
    // key: the last content word before the number in the same clause
    std::size_t c = b;
    while (c > 0 && !clause_boundary(s[c - 1])) --c;
    std::string clause = text::to_lower(s.substr(c, b - c));
    text::for_each_token(clause, [&](std::string_view tok) {
      if (valid_key(tok)) q.key = std::string(tok);
    });
    out.push_back(std::move(q));
  }
  std::map<std::string, int> per_unit;
  for (const auto &q : out) ++per_unit[q.unit];
  for (auto &q : out) q.unit_unique = per_unit[q.unit] == 1;
  return out;
}

bool same_referent(const Quantity &a, const Quantity &b) {
  if (a.unit != b.unit) return false;
  if (!a.key.empty() && a.key == b.key) return true;
  return (a.key.empty() || b.key.empty()) && a.unit_unique && b.unit_unique;
}

json quantity_json(const Quantity &q) { return {{"text", q.text}, {"key", q.key}, {"unit", q.unit}, {"value", q.value}}; }

namespace {
bool same_value(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(a)); }

struct Claim {
  Quantity q;
  int t = 0;  // turn that stated it last
};

// An earlier claim contradicted by a new document or by the user's text.
struct Challenge {
  std::size_t claim;
  Quantity evidence;
  std::string source;
};

// What may have prompted a turn to revise earlier claims: new documents and an explicit user correction.
struct Triggers {
  json new_docs = json::array();  // ids of documents not seen in earlier turns
  std::string correction_cue;     // the user's correction cue ("" none)
  std::vector<Challenge> challenges;
  bool any() const { return !challenges.empty() || !correction_cue.empty(); }
};

Triggers find_triggers(const OTInput &in, std::size_t i, const std::vector<Claim> &state,
                       const std::set<std::string> &seen_docs) {
  Triggers tr;
  std::vector<std::pair<std::string, Quantity>> new_doc_q;  // (doc id, quantity)
  for (const auto &d : in.o0.docs) {
    std::string key(text::trim(d.text));
    if (key.empty() || seen_docs.count(key) != 0) continue;
    if (i > 0) {
      tr.new_docs.push_back(d.id);
      for (auto &q : extract_quantities(d.text)) new_doc_q.emplace_back(d.id, std::move(q));
    }
  }
  if (i == 0) return tr;
  tr.correction_cue = full::find_cue(full::cues_correction(), in.user_text);
  std::vector<Quantity> user_q = extract_quantities(in.user_text);
  for (std::size_t c = 0; c < state.size(); ++c) {
    bool done = false;
    for (const auto &uq : user_q)
      if (!done && same_referent(state[c].q, uq) && !same_value(state[c].q.value, uq.value)) {
        tr.challenges.push_back({c, uq, "user_text"});
        done = true;
      }
    for (const auto &[id, dq] : new_doc_q)
      if (!done && same_referent(state[c].q, dq) && !same_value(state[c].q.value, dq.value)) {
        tr.challenges.push_back({c, dq, "new_doc:" + id});
        done = true;
      }
  }
  return tr;
}

// C_turn: agreement of this answer's quantities with the earlier claims on the same referent.
void score_consistency(OTTurn &r, std::size_t i, const std::vector<Claim> &state, bool triggered) {
  int agree = 0, conflict = 0, revised = 0;
  json pairs = json::array();
  std::set<std::size_t> used;
  for (const auto &q : r.quantities) {
    for (std::size_t c = 0; c < state.size(); ++c) {
      if (used.count(c) != 0 || !same_referent(state[c].q, q)) continue;
      used.insert(c);
      bool same = same_value(state[c].q.value, q.value);
      std::string kind = same ? "agree" : (triggered ? "revised" : "conflict");
      if (kind == "agree")
        ++agree;
      else if (kind == "conflict")
        ++conflict;
      else
        ++revised;
      pairs.push_back(
          {{"now", quantity_json(q)}, {"before", quantity_json(state[c].q)}, {"before_t", state[c].t}, {"kind", kind}});
      break;
    }
  }
  r.C_turn = agree + conflict > 0 ? static_cast<double>(agree) / (agree + conflict) : 0.0;
  r.consistency_ev = {
      {"agree", agree},
      {"conflict", conflict},
      {"revised_after_counter_evidence", revised},
      {"pairs", pairs},
      {"reason",
       i == 0 ? "first turn" : (agree + conflict > 0 ? "share of agreeing quantities" : "no comparable quantities")}};
}

// R_corr in quantity mode: for each challenged claim, what this answer now states about its referent.
void score_challenges(OTTurn &r, const std::vector<Claim> &state, const std::vector<Challenge> &challenges) {
  double sum = 0;
  json items = json::array();
  for (const auto &ch : challenges) {
    const Claim &old = state[ch.claim];
    const Quantity *stated = nullptr;
    for (const auto &q : r.quantities)
      if (same_referent(old.q, q)) {
        stated = &q;
        break;
      }
    double score = 0;
    std::string outcome = "not addressed";
    if (stated != nullptr && same_value(stated->value, ch.evidence.value)) {
      score = 1;
      outcome = "adopted the evidence";
    } else if (stated != nullptr && !same_value(stated->value, old.q.value)) {
      score = 0.5;
      outcome = "changed, but not to the evidence";
    } else if (stated != nullptr) {
      outcome = "defended the old claim";
    }
    sum += score;
    items.push_back({{"claim", quantity_json(old.q)},
                     {"claim_t", old.t},
                     {"evidence", quantity_json(ch.evidence)},
                     {"source", ch.source},
                     {"answer", stated ? quantity_json(*stated) : json(nullptr)},
                     {"outcome", outcome},
                     {"score", score}});
  }
  r.R_corr = sum / static_cast<double>(challenges.size());
  r.correction_ev["mode"] = "quantity";
  r.correction_ev["challenges"] = items;
}

// R_corr: after counter-evidence, did this answer change the challenged claim (or, after a bare correction cue,
// acknowledge it)?
void score_correction(OTTurn &r, const OTInput &in, std::size_t i, const std::vector<Claim> &state,
                      const Triggers &tr) {
  r.correction_ev = {{"correction_cue", tr.correction_cue.empty() ? json(nullptr) : json(tr.correction_cue)},
                     {"new_doc_ids", tr.new_docs}};
  if (!tr.challenges.empty()) {
    score_challenges(r, state, tr.challenges);
  } else if (!tr.correction_cue.empty()) {
    std::string ack = full::find_cue(full::cues_acknowledge(), in.o0.answer);
    r.R_corr = ack.empty() ? 0.0 : 1.0;
    r.correction_ev["mode"] = "acknowledgement";
    r.correction_ev["acknowledge_cue"] = ack.empty() ? json(nullptr) : json(ack);
    r.correction_ev["outcome"] = ack.empty() ? "correction not taken up" : "correction acknowledged";
  } else {
    r.correction_ev["mode"] = nullptr;
    r.correction_ev["reason"] = i == 0 ? "first turn" : "no counter-evidence in this turn";
  }
}

// V_ext: an external verifier's score, only when its weight is > 0.
void score_verification(OTTurn &r, const OTInput &in, const OTParams &p) {
  if (p.w_verify > 0) {
    r.V_ext = in.verification ? clip01(*in.verification) : 0.0;
    r.verify_ev = {{"enabled", true},
                   {"value", in.verification ? json(*in.verification) : json(nullptr)},
                   {"reason", in.verification ? "verifier score" : "no verifier score for this turn"}};
  } else {
    r.V_ext = 0;
    r.verify_ev = {{"enabled", false}, {"reason", "w_verify = 0: no verifier configured"}};
  }
}

// Δdrift: the fall of A_ret below the mean of the last drift_window computed turns (out[0..i) are done).
void score_drift(std::vector<OTTurn> &out, std::size_t i, const OTParams &p) {
  OTTurn &r = out[i];
  std::vector<int> ref;
  for (std::size_t u = i; u-- > 0 && static_cast<int>(ref.size()) < std::max(1, p.drift_window);)
    if (out[u].o0.computed) ref.push_back(static_cast<int>(u));
  if (!r.o0.computed || ref.empty()) {
    r.drift = 0;
    r.drift_ev = {
        {"reason", i == 0 ? "first turn" : (!r.o0.computed ? "O0 not computed" : "no earlier turn with docs")}};
    return;
  }
  double mean = 0;
  json ts = json::array();
  for (int u : ref) {
    mean += out[static_cast<std::size_t>(u)].o0.A_ret;
    ts.push_back(u + 1);
  }
  mean /= static_cast<double>(ref.size());
  r.drift = clip01(mean - r.o0.A_ret - p.drift_margin);
  r.drift_ev = {{"reference_t", ts},
                {"A_ret_reference", mean},
                {"A_ret", r.o0.A_ret},
                {"margin", p.drift_margin},
                {"reason", r.drift > 0 ? "alignment fell" : "alignment held"}};
}

// The claim state after turn t: its quantities replace the earlier claims on the same referent.
void update_claims(std::vector<Claim> &state, const std::vector<Quantity> &quantities, int t) {
  for (const auto &q : quantities) {
    bool found = false;
    for (auto &c : state)
      if (same_referent(c.q, q)) {
        c.q = q;
        c.t = t;
        found = true;
        break;
      }
    if (!found) state.push_back({q, t});
  }
}
}  // namespace

std::vector<OTTurn> compute_o_t(const std::vector<OTInput> &turns, const OTParams &p, const EmbedFn &embed) {
  std::vector<OTTurn> out(turns.size());
  std::vector<Claim> state;         // the latest stated value per referent
  std::set<std::string> seen_docs;  // texts of all docs of earlier turns
  for (std::size_t i = 0; i < turns.size(); ++i) {
    OTTurn &r = out[i];
    const OTInput &in = turns[i];
    r.o0 = compute_o0(in.o0, p.o0, embed);
    r.quantities = extract_quantities(in.o0.answer);
    const Triggers tr = find_triggers(in, i, state, seen_docs);
    score_consistency(r, i, state, tr.any());
    score_correction(r, in, i, state, tr);
    score_verification(r, in, p);
    score_drift(out, i, p);
    if (r.o0.computed)
      r.O = clip01(r.o0.O0 + p.w_consistency * r.C_turn + p.w_correction * r.R_corr + p.w_verify * r.V_ext - p.lambda_drift * r.drift);
    update_claims(state, r.quantities, static_cast<int>(i) + 1);
    for (const auto &d : in.o0.docs) seen_docs.insert(std::string(text::trim(d.text)));
  }
  return out;
}

}  // namespace ksodi
