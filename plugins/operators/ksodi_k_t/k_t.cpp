#include "k_t.hpp"

#include <algorithm>

#include "ksodi_measures/cues.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

using nlohmann::json;

namespace {

// ΔK_fill / ΔK_decay: weighted share of the dimensions that appeared / disappeared since the previous turn.
void score_fill_decay(KTTurn &r, const KTTurn &prev, int t, const KTParams &p, double wsum) {
  std::vector<std::string> gained, lost;
  double wg = 0, wl = 0;
  for (std::size_t d = 0; d < kK0Dims.size(); ++d) {
    if (r.k0.present[d] && !prev.k0.present[d]) {
      gained.push_back(kK0Dims[d]);
      wg += p.k0.weights[d];
    } else if (!r.k0.present[d] && prev.k0.present[d]) {
      lost.push_back(kK0Dims[d]);
      wl += p.k0.weights[d];
    }
  }
  r.fill = wsum > 0 ? wg / wsum : 0;
  r.decay = wsum > 0 ? wl / wsum : 0;
  json gained_ev = json::object(), lost_ev = json::object();
  for (const auto &d : gained) {
    auto k = static_cast<std::size_t>(std::find(kK0Dims.begin(), kK0Dims.end(), d) - kK0Dims.begin());
    gained_ev[d] = r.k0.evidence[k];
  }
  for (const auto &d : lost) {
    auto k = static_cast<std::size_t>(std::find(kK0Dims.begin(), kK0Dims.end(), d) - kK0Dims.begin());
    lost_ev[d] = {{"now", r.k0.evidence[k]}, {"before", prev.k0.evidence[k]}};
  }
  r.fill_ev = {{"compared_with_t", t - 1}, {"dimensions_gained", gained}, {"evidence", gained_ev}};
  r.decay_ev = {{"compared_with_t", t - 1}, {"dimensions_lost", lost}, {"evidence", lost_ev}};
}

// The highest similarity of turn i's user text (and docs) to the previous turns first..i-1, in one embedding call;
// the evidence lists each.
void most_similar_turn(const std::vector<KTInput> &turns, std::size_t i, std::size_t first, const KTParams &p,
                       const EmbedFn &embed, KTTurn &r) {
  std::vector<std::string> ctx;
  for (std::size_t u = first; u < i; ++u)
    ctx.push_back(turns[u].k0.user_text + "\n" + turns[u].assistant_text +
                  (p.shift_with_docs ? "\n" + turns[u].docs_text : ""));
  std::string query = turns[i].k0.user_text + (p.shift_with_docs ? "\n" + turns[i].docs_text : "");
  std::vector<std::string_view> texts{query};
  for (const auto &c : ctx) texts.emplace_back(c);
  EmbedResult e = embed(texts);
  r.embedding_model_id = e.model_id;
  json sims = json::object();
  double best = 0;
  int best_t = static_cast<int>(first) + 1;
  for (std::size_t k = 0; k < ctx.size(); ++k) {
    double s = clip01(cosine(e.row(0), e.row(k + 1), e.dim));
    sims[std::to_string(first + k + 1)] = s;
    if (s > best) {
      best = s;
      best_t = static_cast<int>(first + k) + 1;
    }
  }
  r.similarity = best;
  r.shift_ev["similarity_by_t"] = sims;
  r.shift_ev["max_similarity"] = best;
  r.shift_ev["most_similar_t"] = best_t;
}

// ΔK_shift: the user turn compared with the previous W turns (user text + answer); a follow-up that refers back
// is exempt where the parameters say so.
void score_shift(const std::vector<KTInput> &turns, std::size_t i, const KTParams &p, const EmbedFn &embed, KTTurn &r) {
  const std::string &q = turns[i].k0.user_text;
  std::string backref = full::find_cue(full::cues_backref(), q);
  std::string change = full::find_cue(full::cues_topic_change(), q);
  const auto window = static_cast<std::size_t>(std::max(1, p.shift_window));
  const std::size_t first = i >= window ? i - window : 0;
  r.shift_ev = {{"backref_cue", backref.empty() ? json(nullptr) : json(backref)},
                {"topic_change_cue", change.empty() ? json(nullptr) : json(change)},
                {"tau_shift", p.tau_shift}};
  const std::size_t words = full::word_count(q);
  r.shift_ev["user_words"] = words;
  if (words < static_cast<std::size_t>(std::max(0, p.shift_min_words))) {
    r.shift_ev["reason"] = "user turn too short to judge a topic (" + std::to_string(words) + " words)";
    return;
  }
  most_similar_turn(turns, i, first, p, embed, r);
  double raw = p.tau_shift > 0 ? clip01(1.0 - r.similarity / p.tau_shift) : 0.0;
  r.shift_ev["raw"] = raw;
  if (p.followup_exempt && !backref.empty() && change.empty()) {
    r.shift = 0;
    r.shift_ev["reason"] = "follow-up: the user turn refers back ('" + backref + "')";
  } else {
    r.shift = raw;
    r.shift_ev["reason"] = raw > 0 ? "user turn far from the previous turns" : "user turn close to the previous turns";
  }
}

}  // namespace

std::vector<KTTurn> compute_k_t(const std::vector<KTInput> &turns, const KTParams &p, const EmbedFn &embed) {
  std::vector<KTTurn> out(turns.size());
  double wsum = 0;
  for (double w : p.k0.weights) wsum += w;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    KTTurn &r = out[i];
    r.k0 = compute_k0(turns[i].k0, p.k0);
    if (i == 0) {
      r.fill_ev = r.shift_ev = r.decay_ev = {{"reason", "first turn"}};
      r.K = clip01(r.k0.K0);
      continue;
    }
    score_fill_decay(r, out[i - 1], static_cast<int>(i) + 1, p, wsum);
    score_shift(turns, i, p, embed, r);
    r.K = clip01(r.k0.K0 + p.mu_fill * r.fill - p.nu_shift * r.shift - p.lambda_decay * r.decay);
  }
  return out;
}

}  // namespace ksodi
