// Format requests: which output formats a prompt asks for (not merely mentions), and requested item counts — the
// expectations of S0 and the E dimension of K0. Rules: plugins/operators/ksodi_s0/README.md ("Expectations E").
#include "ksodi/format_requests.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "format_lexicon.hpp"
#include "ksodi/detect.hpp"

namespace ksodi {

namespace {

using text::TokenizedText;
using namespace lexicon;  // word classes (W_*), form nouns, number words: format_lexicon.hpp

// What the scanner knows of each token: its word classes (W_*), its clause and sentence, the gap after it.
struct TokenInfo {
  std::uint32_t flags = 0;
  int clause = 0, sentence = 0;
  bool boundary_after_colon = false;  // the gap after this token holds ':' (label)
  bool newline_after = false;
  bool example = false;  // part of an example inside the request ("such as:\n* This is a point")
};

struct Scanner {
  const char *source;
  std::string_view raw;
  const TokenizedText &t;
  FormatRequests &out;
  std::vector<TokenInfo> token_info;
  std::vector<bool> sent_question, sent_request, sent_codeart, sent_db;
  std::vector<int> clause_start;  // token index where each clause starts
  std::vector<bool> matched_noun;
  std::vector<std::pair<int, std::size_t>> raised_in;  // (format, sentence) of every request of this source
  struct Pending {
    int fmt;
    std::size_t i, end;
  };
  std::vector<Pending> pending;  // counted item nouns without a request of their own ("Nenne 5 Punkte als Liste")
  bool needs_modifier_ignored = false;  // number_word's out-parameter where only the number matters
  bool any_introducer = false;

  Scanner(const char *s, std::string_view r, const TokenizedText &tt, FormatRequests &o) : source(s), raw(r), t(tt), out(o) {}

  std::string_view gap(std::size_t a, std::size_t b) const {  // text between token a's end and token b's start
    std::size_t ge = b < t.size() ? t.tokens[b].off : t.lowered.size();
    std::size_t gb = t.tokens[a].off + t.tokens[a].len;
    return std::string_view(t.lowered).substr(gb, ge - gb);
  }
  std::uint32_t word_classes(std::size_t i) const { return token_info[i].flags; }
  std::string_view tok(std::size_t i) const { return i < t.size() ? t.token(i) : std::string_view{}; }
  bool same_clause(std::size_t a, std::size_t b) const { return token_info[a].clause == token_info[b].clause; }

  void prepare() {
    const auto &wt = word_table();
    const std::size_t n = t.size();
    token_info.resize(n);
    matched_noun.assign(n, false);
    int clause = 0, sentence = 0;
    clause_start.push_back(0);
    sent_question.push_back(false);
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) {
        std::string_view g = gap(i - 1, i);
        bool sent_end = g.find_first_of(".!?\n") != std::string_view::npos;
        bool clause_end = sent_end || g.find_first_of(",;:()[]\"") != std::string_view::npos;
        token_info[i - 1].boundary_after_colon = g.find(':') != std::string_view::npos;
        token_info[i - 1].newline_after = g.find('\n') != std::string_view::npos;
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
      token_info[i].clause = clause;
      token_info[i].sentence = sentence;
      auto it = wt.find(t.token(i));
      token_info[i].flags = it == wt.end() ? 0 : it->second;
    }
    if (n > 0) {
      std::string_view tail = gap(n - 1, n);
      sent_question.back() = tail.find('?') != std::string_view::npos;
    }
    const std::size_t ns = static_cast<std::size_t>(sentence) + 1;
    sent_request.assign(ns, false);
    sent_codeart.assign(ns, false);
    sent_db.assign(ns, false);
    sent_listnoun.assign(ns, false);
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = static_cast<std::size_t>(token_info[i].sentence);
      if (word_classes(i) & W_PLEASE) sent_request[s] = true;
      // can you / kannst du / können Sie / could you please
      if ((word_classes(i) & W_MODALQ) && i + 1 < n && ((word_classes(i + 1) & W_YOU) || (i + 2 < n && (word_classes(i + 2) & W_YOU))) && same_clause(i, i + 1))
        sent_request[s] = true;
      if (word_classes(i) & W_CODEART) sent_codeart[s] = true;
      if (word_classes(i) & W_DB) sent_db[s] = true;
      any_introducer = any_introducer || (word_classes(i) & W_EXAMPLE);
    }
    if (any_introducer) mark_examples();  // no "such as", "format", "Beispiel" …: no example
  }

  bool negated(std::size_t i) const { return detect::negated_before(t, i); }

  // A verb at j reads as a request: not "I make …" / "the output …" / "I want to make …".
  bool verb_is_request(std::size_t j) const {
    if (j == 0 || !same_clause(j - 1, j)) return true;
    std::uint32_t p = word_classes(j - 1);
    if (p & (W_DET | W_ART)) return false;  // a noun: "the output", "a list"
    if (p & W_SUBJ) return j >= 2 && same_clause(j - 2, j) && (word_classes(j - 2) & W_MODALQ);  // "can we make" yes, "I make" no
    if (tok(j - 1) == "to") return j >= 2 && (word_classes(j - 2) & W_YOU);                       // "want you to write" yes
    return true;
  }
  // "I learned it step by step", "ich habe das in einer Tabelle": a statement with its own subject and no
  // request or wish anywhere in the clause or sentence ("I'd like it as a table" is a wish, "Antworten Sie in
  // Stichpunkten" an imperative).
  bool declarative_statement(std::size_t i) const {
    const auto s = static_cast<std::size_t>(token_info[i].sentence);
    if (sent_question[s] || sent_request[s]) return false;
    const auto c = token_info[i].clause;
    bool subject = false;
    for (std::size_t j = static_cast<std::size_t>(clause_start[static_cast<std::size_t>(c)]); j < t.size() && token_info[j].clause == c; ++j) {
      if ((word_classes(j) & (W_STRONG | W_STRONG_INDEF | W_EXPLAIN | W_LISTVERB)) && verb_is_request(j)) return false;
      if (word_classes(j) & (W_WEAK | W_MODALN)) return false;
      if (j < i && (word_classes(j) & W_SUBJ) && !(j > 0 && same_clause(j - 1, j) && (word_classes(j - 1) & (W_MODALQ | W_DE_INF)))) subject = true;
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
    // An example inside the request ("such as:\n* This is a list item") is part of the instruction: it asks for
    // no list of its own.
    if (fmt == kFmtList && token_info[std::max(a, b)].example) return;
    raised_in.emplace_back(fmt, static_cast<std::size_t>(token_info[std::max(a, b)].sentence));
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
    if ((p1 == "only" || p1 == "just" || p1 == "nur") && p2 != "not" && p2 != "nicht") { from = j - 1; return CountRel::Exact; }
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

  // `num` = the number's token: a number read twice ("a list of 3 items": after "list", before "items") is one
  // count; the same count stated again elsewhere ("the top 3 … exactly 3 bullet points") counts the answer's
  // items if either statement does.
  std::vector<std::size_t> count_nums;
  void add_count(int fmt, CountRel rel, int n, std::size_t a, std::size_t b, std::size_t num, bool whole_answer = false) {
    if (fmt != kFmtList && fmt != kFmtSteps) return;
    if (fmt == kFmtList && (token_info[a].example || token_info[b].example)) return;  // "such as:\n1. first point": no count
    const bool seen = std::find(count_nums.begin(), count_nums.end(), num) != count_nums.end();
    count_nums.push_back(num);
    FormatRequest &f = out[static_cast<std::size_t>(fmt)];
    for (auto &c : f.counts)
      if (c.rel == rel && c.n == n) {
        if (!seen) c.whole_answer = c.whole_answer || (whole_answer && fmt == kFmtList);
        return;
      }
    f.counts.push_back({rel, n, phrase(a, b), source, whole_answer && fmt == kFmtList});
  }

  // A count right before a noun at i, up to four tokens back in its clause (words such as "markdown", "short"
  // may stand between; a determiner, frame or verb ends the search): "exactly 4 bullet points", "genau drei
  // kurze Stichpunkte", "a single bullet point" (item nouns only), and ranges — "two to four", "3-5", "between
  // 3 and 5", "zwei bis vier", "2 or 3" — read as at least + at most.
  struct CountRead {
    int n_counts = 0;
    CountRel rel[2] = {CountRel::Exact, CountRel::Exact};
    int n[2] = {0, 0};
    std::size_t from = 0;  // first token of the count phrase
    std::size_t num = 0;   // the number token next to the noun
  };
  bool count_before(std::size_t i, bool item_noun, CountRead &cr) const {
    for (std::size_t k = 1; k <= 4 && k <= i; ++k) {
      const std::size_t j = i - k;
      if (!same_clause(j, i) || token_info[j].example) break;
      cr = CountRead{};
      if (item_noun && tok(j) == "single") {  // "a single bullet point", "only one single item"
        cr.n_counts = 1;
        cr.n[0] = 1;
        cr.num = cr.from = j;
        if (j > 0 && same_clause(j - 1, j) && (tok(j - 1) == "a" || tok(j - 1) == "one" || tok(j - 1) == "only" || tok(j - 1) == "just"))
          cr.from = j - 1;
        return true;
      }
      int n = 0;
      CountRel rel;
      std::size_t from = j;
      if (number_at(j, n, rel, from)) {
        cr.n_counts = 1;
        cr.rel[0] = rel;
        cr.n[0] = n;
        cr.from = from;
        cr.num = j;
        // A range ending here: "two to four", "zwei bis vier", "2 or 3", "between 3 and 5", "3-5".
        if (from == j && j >= 1 && same_clause(j - 1, j)) {
          std::size_t a = j;  // the range's first number
          const std::string_view link = tok(j - 1);
          const std::string_view g = text::trim(gap(j - 1, j));
          bool nm = false;
          if ((g == "-" || g == "\xe2\x80\x93") && number_word(tok(j - 1), nm) > 0) {
            a = j - 1;
          } else if (j >= 2 && same_clause(j - 2, j) && number_word(tok(j - 2), nm) > 0) {
            const bool between = j >= 3 && same_clause(j - 3, j) && (tok(j - 3) == "between" || tok(j - 3) == "zwischen");
            if (link == "to" || link == "bis" || link == "or" || link == "oder" || ((link == "and" || link == "und") && between))
              a = j - 2;
          }
          const int lo = a < j ? number_word(tok(a), nm) : 0;
          if (a < j && lo >= 1 && lo < n) {
            cr.n_counts = 2;
            cr.rel[0] = CountRel::AtLeast;
            cr.n[0] = lo;
            cr.rel[1] = CountRel::AtMost;
            cr.n[1] = n;
            cr.from = a >= 1 && same_clause(a - 1, a) && (tok(a - 1) == "between" || tok(a - 1) == "zwischen" || tok(a - 1) == "from" || tok(a - 1) == "von")
                          ? a - 1
                          : a;
          }
        }
        return true;
      }
      if (word_classes(j) & (W_DET | W_FRAME | W_STRONG | W_STRONG_INDEF | W_WITH)) break;
    }
    return false;
  }
  // A count that holds per part of the answer ("each section should have 2 bullet points", "3 bullet points per
  // section", "pro Abschnitt drei Stichpunkte") is not a count of the answer's items.
  bool distributive(std::size_t from, std::size_t end) const {
    for (std::size_t k = 1; k <= 6 && k <= from; ++k) {
      const std::size_t j = from - k;
      if (!same_clause(j, from)) break;
      if (word_classes(j) & W_EACH) return true;
    }
    if (end + 1 < t.size() && same_clause(end, end + 1)) {
      if (word_classes(end + 1) & W_EACH) return true;
      const std::string_view p = tok(end + 1);
      if ((p == "for" || p == "f\xc3\xbcr" || p == "in") && end + 2 < t.size() && (word_classes(end + 2) & W_EACH)) return true;
    }
    return false;
  }

  // A count right before a noun ("genau drei Punkte", "at least 5 bullet points", "3 or more steps", "top 3"),
  // or right after it ("a list of 5 items", "eine Liste mit drei Punkten"). Returns true when found. A count
  // before a container noun counts lists ("two bulleted lists"), not items — except "a 5-item list".
  bool count_near_noun(int fmt, std::size_t i, std::size_t end) {
    const Noun nn = form_noun(t, i);
    const bool item = (nn.flags & N_ITEM) != 0;
    const bool container = nn.fmt == kFmtList && !item;
    CountRead cr;
    if (count_before(i, item, cr)) {
      bool counts_items = !container;
      for (std::size_t q = cr.num + 1; q < i && container; ++q) {
        const std::string_view w = tok(q);
        counts_items = counts_items || w == "item" || w == "items" || w == "point" || w == "points" || w == "punkte" ||
                       w == "punkt" || w == "entry" || w == "entries";
      }
      if (counts_items) {
        if (!distributive(cr.from, end))
          for (int c = 0; c < cr.n_counts; ++c) add_count(fmt, cr.rel[c], cr.n[c], cr.from, end, cr.num, item);
        return true;
      }
    }
    // In brackets after it: "in bullet points (exactly 3)", "in Stichpunkten (höchstens 5)".
    if (end + 1 < t.size() && text::trim(gap(end, end + 1)) == "(") {
      for (std::size_t j = end + 1; j < t.size() && j <= end + 3; ++j) {
        int n = 0;
        CountRel rel;
        std::size_t from = j;
        if (number_at(j, n, rel, from)) {
          add_count(fmt, rel, n, i, j, j, item);
          return true;
        }
        if (gap(j, j + 1).find(')') != std::string_view::npos) break;
      }
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
            add_count(fmt, rel, n, i, j + 1 < t.size() && same_clause(j + 1, end) ? j + 1 : j, j);  // "… mit maximal 5 punkten"
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
        add_count(fmt, rel, n, v, e, j);
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
      const std::uint32_t f = word_classes(j);
      if (matched_noun[j] && coord_seen && k <= 5) return j;  // "eine Tabelle und danach JSON"
      if ((f & W_FRAME) && k <= 4 && !det_seen && is_frame(j) && !negated(j) && !declarative_statement(i)) return j;
      if ((f & W_WITH) && k <= 4 && (nn.flags & N_WITH_OK) && (!det_seen || (nn.flags & N_DEF_WITH_OK)) && !negated(j) &&
          !declarative_statement(i))
        return j;
      // A definite article after give/show names an existing table or JSON ("show me the table"); for lists and
      // steps it is the usual request ("give me the steps").
      // "make 3 points" / "Punkte machen" argue or score; they ask for no list.
      const bool make_points = (nn.flags & N_COUNTED_ONLY) && (tok(j) == "make" || tok(j) == "mach" || tok(j) == "mache");
      if ((f & W_STRONG) && k <= 5 && (!det_seen || fmt == kFmtList || fmt == kFmtSteps) && verb_is_request(j) && !negated(j) && !make_points) return j;
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
          if (word_classes(q) & W_ANSWER) return q;  // "your answer must contain …", "die Antwort soll … enthalten"
      }
      if ((f & W_QWORD) && fmt == kFmtSteps && k <= 3 && sent_question[static_cast<std::size_t>(token_info[i].sentence)]) {
        bool past = false;
        for (std::size_t q = static_cast<std::size_t>(clause_start[static_cast<std::size_t>(token_info[i].clause)]);
             q < t.size() && token_info[q].clause == token_info[i].clause; ++q)
          past = past || (word_classes(q) & W_PAST);
        if (!past) return j;  // "what are the steps?", "welche Schritte muss ich gehen?"
      }
      if (f & W_COORD) coord_seen = true;
      if (f & W_DET) det_seen = true;
    }
    // A label: "Output: a JSON object …", "Format: Liste".
    for (std::size_t k = 0; k <= 8 && k <= i; ++k) {
      const std::size_t j = i - k;
      if (k > 0 && token_info[j].newline_after) break;
      if (k > 0 && (word_classes(j) & W_LABEL) && token_info[j].boundary_after_colon) {
        bool sentence_break = false;
        for (std::size_t q = j + 1; q < i; ++q) sentence_break = sentence_break || token_info[q].sentence != token_info[j + 1].sentence;
        if (!sentence_break) return j;
      }
    }
    // German verb-final request: "Kannst du mir die Schritte erklären?", "Bitte eine Tabelle erstellen."
    const auto s = static_cast<std::size_t>(token_info[i].sentence);
    if (sent_request[s]) {
      for (std::size_t j = end + 1; j < t.size() && j <= end + 3 && same_clause(j, i); ++j) {
        if ((word_classes(j) & W_FINAL) && !(ambiguous_table)) return j;
        if ((word_classes(j) & W_EXPLAIN_FINAL) && fmt == kFmtSteps) return j;
      }
    }
    return npos;
  }

  // ---- counted item nouns in an instruction ----
  // Words of a marker phrase after a list noun: "in markdown (format)", "marked by an asterisk", "with dashes",
  // "mit Sternchen", "mit Bindestrichen", or an example right after ("using this format: * first point").
  // Returns the last token of the phrase, or npos.
  std::size_t marker_phrase_after(std::size_t end) const {
    constexpr std::size_t npos = static_cast<std::size_t>(-1);
    for (std::size_t k = end + 1; k < t.size() && k <= end + 6 && token_info[k].sentence == token_info[end].sentence; ++k) {
      if (token_info[k].example) return k > end + 1 ? k - 1 : npos;
      const std::string_view w = tok(k);
      if (w == "markdown") return tok(k + 1) == "format" || tok(k + 1) == "formatting" ? k + 1 : k;
      if (marker_word(w) != 0) return k;
      if ((word_classes(k) & W_EXAMPLE) && k + 1 < t.size() && token_info[k + 1].example) return k;
    }
    return npos;
  }
  // 1: a bullet glyph word (asterisk, dash, Sternchen, Bindestrich, Spiegelstrich); 0: none.
  static int marker_word(std::string_view w) {
    if (w == "asterisk" || w == "asterisks" || w == "sternchen" || w == "dash" || w == "dashes" || w == "hyphen" ||
        w == "hyphens" || starts(w, "bindestrich") || starts(w, "spiegelstrich"))
      return 1;
    return 0;
  }
  static bool markdown_glyph_word(std::string_view w) { return w != "spiegelstrich" && w != "spiegelstriche" && w != "spiegelstrichen"; }

  // Whether the sentence of a counted noun (count phrase starting at `from`) is an instruction: an obligation
  // (must, should, soll, darf, make sure, ensure, has to), a request verb in request position (write, include,
  // use, schreibe …; not "I write"), please/bitte or can-you, a wish (I need/want, I'd like), or a fragment
  // that is nothing but the count ("Exactly 3 bullet points.", "Genau drei Stichpunkte, bitte."). A question
  // counts only with a request verb or can-you. Returns the token that made it one (npos: none).
  std::size_t instruction_signal(std::size_t i, std::size_t from) const {
    constexpr std::size_t npos = static_cast<std::size_t>(-1);
    const int s = token_info[i].sentence;
    const auto su = static_cast<std::size_t>(s);
    const bool question = sent_question[su] && !sent_request[su];
    std::size_t start = from;
    while (start > 0 && token_info[start - 1].sentence == s) --start;
    std::size_t found = npos;
    bool fragment = true;
    for (std::size_t j = start; j < from; ++j) {
      const std::uint32_t f = word_classes(j);
      const std::string_view w = tok(j);
      if (token_info[j].example) continue;
      if (!(f & (W_COORD | W_FRAME | W_WITH | W_PLEASE)) && w != "only" && w != "just" && w != "nur" && w != "auch") fragment = false;
      if (signal_at(j, question)) found = j;
    }
    if (found != npos) {
      // the phrase that asked starts at the first signal close to the count ("limit your answer to 3 …"), else
      // at the count
      for (std::size_t j = from >= 6 ? from - 6 : 0; j < found; ++j)
        if (token_info[j].sentence == s && same_clause(j, from) && signal_at(j, question)) return j;
      return found;
    }
    if (sent_request[su]) return from;
    if (fragment && !question) {
      // nothing but the count before it, and no statement verb after it ("Exactly 3 bullet points were enough.")
      for (std::size_t j = from; j < t.size() && token_info[j].sentence == s; ++j) {
        const std::string_view w = tok(j);
        if ((word_classes(j) & (W_SUBJ | W_PAST)) || w == "is" || w == "are" || w == "was" || w == "were" || w == "has" || w == "ist" ||
            w == "sind" || w == "war" || w == "waren" || w == "hat" || w == "hatte")
          return npos;
      }
      return from;
    }
    return npos;
  }

  // One token that makes its sentence an instruction (see instruction_signal).
  bool signal_at(std::size_t j, bool question) const {
    const std::uint32_t f = word_classes(j);
    const std::string_view w = tok(j);
    if (token_info[j].example || negated(j)) return false;
    if (!question) {
      if (f & (W_MODALN | W_OBLIG | W_PLEASE)) return true;
      if ((f & W_WEAK) && (w != "like" || (j > 0 && (tok(j - 1) == "would" || tok(j - 1) == "d")))) return true;
      if ((w == "has" || w == "have" || w == "need") && tok(j + 1) == "to") return true;
      // The answer as the subject of a present-tense sentence describes what is asked: "Your answer contains
      // exactly 3 bullet points", "Die Antwort besteht aus genau zwei Stichpunkten" (not "the answer from the
      // bot contained …": someone else's, in the past).
      if ((f & W_ANSWER) && w != "result" && w != "ergebnis" && tok(j + 1) != "from" && tok(j + 1) != "of" && tok(j + 1) != "von" &&
          !past_sentence(j) && !speaker_or_contrast(j))
        return true;
    }
    if ((f & (W_STRONG | W_STRONG_INDEF | W_EXPLAIN | W_LISTVERB | W_IMPER)) && verb_is_request(j)) return true;
    return (f & W_DE_INF) && tok(j + 1) == "sie";
  }
  // Whether a token of token i's sentence has one of `flags` or is one of `words`.
  bool sentence_has(std::size_t i, std::uint32_t flags, std::initializer_list<std::string_view> words) const {
    std::size_t a = i;
    while (a > 0 && token_info[a - 1].sentence == token_info[i].sentence) --a;
    for (std::size_t j = a; j < t.size() && token_info[j].sentence == token_info[i].sentence; ++j) {
      if (word_classes(j) & flags) return true;
      const std::string_view w = tok(j);
      if (std::find(words.begin(), words.end(), w) != words.end()) return true;
    }
    return false;
  }
  // Whether the sentence of token i has a subject pronoun or a contrast ("Your answer has 5 bullet points, but I
  // asked for 3"): a remark about an answer given, not a description of the one asked for.
  bool speaker_or_contrast(std::size_t i) const {
    return sentence_has(i, W_SUBJ, {"but", "aber", "however", "jedoch", "allerdings", "although", "obwohl", "instead", "stattdessen"});
  }
  // Whether the sentence of token i speaks of the past ("had", "contained", "enthielt" …).
  bool past_sentence(std::size_t i) const {
    return sentence_has(i, W_PAST, {"was", "were", "war", "waren", "contained", "included", "consisted", "enthielt", "bestand", "umfasste"});
  }

  // A counted item noun that no request word right before it governs, in a sentence that is an instruction:
  // "The response must contain … and exactly 4 bullet points in markdown", "it should have exactly 3 bullet
  // points (marked by an asterisk)", "Write a blog post that has at least 3 bullet points", "Ein Gedicht, das
  // mindestens zwei Aufzählungspunkte enthält" (with "Schreibe" before it), "Genau drei Stichpunkte, bitte."
  // Not: a determiner before the count ("these 4 bullet points", "die drei Stichpunkte oben"), a negated clause,
  // a statement ("My slide has 3 bullet points"); "points"/"Punkte"/"items" only with a marker phrase ("exactly
  // 3 points in markdown"), since "make 3 points" argues. Returns the first token of the phrase that asked
  // (npos: none) and sets `last` to its last token.
  std::size_t counted_request(const Noun &nn, std::size_t i, std::size_t end, std::size_t &last) const {
    constexpr std::size_t npos = static_cast<std::size_t>(-1);
    if (nn.fmt != kFmtList || !(nn.flags & N_ITEM) || negated(i)) return npos;
    CountRead cr;
    if (!count_before(i, true, cr) || negated(cr.from)) return npos;
    // "these 4 bullet points", "die drei Stichpunkte" name existing ones; a relative pronoun opening a later
    // clause does not (", das mindestens zwei Aufzählungspunkte enthält", ", that has 3 bullet points").
    if (cr.from > 0 && same_clause(cr.from - 1, cr.from) && (word_classes(cr.from - 1) & W_DET)) {
      const std::size_t d = cr.from - 1;
      const bool relative = (d == 0 || !same_clause(d - 1, d)) && d > 0 && token_info[d - 1].sentence == token_info[d].sentence;
      if (!relative) return npos;
    }
    const std::size_t m = marker_phrase_after(end);
    if ((nn.flags & N_COUNTED_ONLY) && m == npos) return npos;
    // The counted noun is the subject of a statement ("3 bullet points per slide is a good rule", "… waren zu
    // viel") or sits in a content clause ("explain why 3 bullet points work", "frag, ob drei Stichpunkte reichen").
    const std::string_view nx = tok(end + 1);
    if (end + 1 < t.size() && token_info[end + 1].sentence == token_info[end].sentence &&
        (nx == "is" || nx == "are" || nx == "was" || nx == "were" || nx == "ist" || nx == "sind" || nx == "war" || nx == "waren"))
      return npos;
    const std::size_t sig = instruction_signal(i, cr.from);
    if (sig == npos) return npos;
    for (std::size_t q = sig + 1; q < cr.from && sig < cr.from; ++q) {
      const std::string_view w = tok(q);
      // "keep in mind that my slide has 3 bullet points": the speaker's own thing
      if ((w == "that" || w == "dass") && q + 1 < cr.from) {
        const std::string_view nx1 = tok(q + 1);
        if (nx1 == "i" || nx1 == "we" || nx1 == "my" || nx1 == "our" || nx1 == "ich" || nx1 == "wir" || starts(nx1, "mein") ||
            starts(nx1, "unser"))
          return npos;
      }
      if (w == "why" || w == "how" || w == "whether" || w == "if" || w == "what" || w == "when" || w == "where" ||
          w == "warum" || w == "wieso" || w == "weshalb" || w == "ob" || w == "wie" || w == "wann" || w == "was" || w == "dass")
        return npos;
    }
    last = m != npos ? m : end;
    return sig < cr.from && same_clause(sig, cr.from) && cr.from - sig <= 6 ? sig : cr.from;
  }

  // ---- markers ----
  // The marker a list noun names: "bullet points"/"Stichpunkte" → bullet, "numbered list"/"nummerierte
  // Liste" → numbered (rank 2: it names the marker itself), other nouns → none.
  void noun_marker(const Noun &nn, std::size_t i, std::size_t end) {
    if (nn.fmt != kFmtList || token_info[i].example) return;
    const std::string_view p = i > 0 && same_clause(i - 1, i) ? tok(i - 1) : std::string_view{};
    if (p == "numbered" || starts(p, "nummeriert") || starts(p, "durchnummeriert"))
      add_cue(ListMarker::Numbered, false, 2, phrase(i - 1, end));
    else if (nn.flags & N_BULLET)
      add_cue(ListMarker::Bullet, false, 1, phrase(i, end));
  }
  struct Cue {
    ListMarker m;
    bool markdown_only;  // "markdown": says markdown, not which kind
    bool md;
    int rank;
    std::size_t sentence;
    std::string phrase;
  };
  std::vector<Cue> cues;      // cues that apply where LIST is raised (nouns that asked, examples)
  std::vector<Cue> sent_cues; // phrase cues that apply only in a sentence about a list
  std::vector<bool> sent_listnoun;
  void add_cue(ListMarker m, bool md, int rank, std::string ph, bool markdown_only = false) {
    cues.push_back({m, markdown_only, md, rank, 0, std::move(ph)});
  }
  void apply_cues() {
    FormatRequest &L = out[static_cast<std::size_t>(kFmtList)];
    for (Cue &c : sent_cues)
      if (c.sentence < sent_listnoun.size() && sent_listnoun[c.sentence]) cues.push_back(std::move(c));
    for (int rank = 3; rank >= 1; --rank)
      for (const Cue &c : cues) {
        if (c.rank != rank || c.markdown_only || rank <= L.marker_rank) continue;
        L.marker = c.m;
        L.marker_markdown = c.md;
        L.marker_rank = rank;
        L.marker_phrase = c.phrase;
      }
    for (const Cue &c : cues)
      if (c.md && (c.markdown_only || c.m == L.marker) && !L.marker_markdown && L.marker == ListMarker::Bullet) {
        L.marker_markdown = true;
        if (c.phrase.find(L.marker_phrase) != std::string::npos) L.marker_phrase = c.phrase;  // "bullet points in markdown"
        else if (L.marker_phrase.find(c.phrase) == std::string::npos) L.marker_phrase += "; " + c.phrase;
      }
  }

  // Example bullets inside a request: after an introducer (such as, like, e.g., format, template, structure,
  // for example, Beispiel, Form, Muster, wie folgt …) and a colon — or right after "such as"/"like"/"e.g." — a
  // bullet glyph (- * + • ◦ ‣ – ▪) or a number (1. / 1)) followed by a space starts an example: to the end of
  // its line, or, where it starts a new line, over the following lines that are items. Its tokens are part of
  // the instruction (no request of their own); its glyph names the marker expected (rank 3).
  static int glyph_at(std::string_view L, std::size_t q, bool &md, std::size_t &len) {  // 1 bullet, 2 numbered
    md = false;
    len = 0;
    auto space = [&](std::size_t k) { return k < L.size() && (L[k] == ' ' || L[k] == '\t'); };
    if (q >= L.size()) return 0;
    const char c = L[q];
    if ((c == '*' || c == '-' || c == '+') && space(q + 1)) {
      md = true;
      len = 1;
      return 1;
    }
    for (std::string_view g : {"\xe2\x80\xa2", "\xe2\x97\xa6", "\xe2\x80\xa3", "\xe2\x80\x93", "\xe2\x96\xaa"})
      if (L.substr(q, g.size()) == g && space(q + g.size())) {
        len = g.size();
        return 1;
      }
    std::size_t d = q;
    while (d < L.size() && d - q < 3 && L[d] >= '0' && L[d] <= '9') ++d;
    if (d > q && d < L.size() && (L[d] == '.' || L[d] == ')') && space(d + 1)) {
      len = d + 1 - q;
      return 2;
    }
    return 0;
  }
  bool introducer_before(std::size_t c) const {  // an example introducer among the 8 tokens up to c
    for (std::size_t k = 0; k <= 8 && k <= c; ++k) {
      const std::size_t j = c - k;
      if (k > 0 && token_info[j].sentence != token_info[c].sentence) break;
      if (!(word_classes(j) & W_EXAMPLE)) continue;
      const std::string_view w = tok(j);
      if (w == "such" && tok(j + 1) != "as") continue;
      if (w == "e" && tok(j + 1) != "g") continue;
      if (w == "z" && tok(j + 1) != "b") continue;
      if ((w == "g" && (j == 0 || tok(j - 1) != "e")) || (w == "b" && (j == 0 || tok(j - 1) != "z"))) continue;
      return true;
    }
    return false;
  }
  void mark_examples() {
    const std::string_view L = t.lowered;
    const std::size_t n = t.size();
    auto token_at_or_after = [&](std::size_t pos) {
      return static_cast<std::size_t>(std::lower_bound(t.tokens.begin(), t.tokens.end(), pos,
                                                       [](const TokenizedText::Tok &x, std::size_t v) { return x.off < v; }) -
                                      t.tokens.begin());
    };
    std::size_t done = 0;  // examples do not overlap
    for (std::size_t c = 0; c < n; ++c) {
      const std::size_t e = t.tokens[c].off + t.tokens[c].len;
      const std::size_t ge = c + 1 < n ? t.tokens[c + 1].off : L.size();
      if (e < done) continue;
      std::string_view g = L.substr(e, ge - e);
      std::size_t colon = g.find(':');
      std::size_t q;
      const std::string_view w = tok(c);
      if (colon != std::string_view::npos) {
        q = e + colon + 1;
      } else if (((w == "as" && c > 0 && tok(c - 1) == "such") || w == "like" || (w == "g" && c > 0 && tok(c - 1) == "e")) ) {
        q = e;
        while (q < L.size() && L[q] == '.') ++q;  // "e.g."
      } else {
        continue;
      }
      // skip spaces and at most two line breaks
      int breaks = 0;
      while (q < L.size() && (L[q] == ' ' || L[q] == '\t' || L[q] == '\r' || (L[q] == '\n' && ++breaks <= 2))) ++q;
      if (breaks > 2) continue;
      bool md = false;
      std::size_t glen = 0;
      const int kind = glyph_at(L, q, md, glen);
      if (kind == 0 || !introducer_before(c)) continue;
      // the example's extent: the rest of the line, or consecutive item lines
      std::size_t stop = L.find('\n', q);
      if (stop == std::string_view::npos) stop = L.size();
      const std::string first_line(text::trim(L.substr(q, stop - q)));
      if (breaks > 0) {
        std::size_t ls = stop;
        while (ls < L.size()) {
          std::size_t nl = L.find('\n', ls + 1);
          std::size_t le = nl == std::string_view::npos ? L.size() : nl;
          std::size_t b = ls + 1;
          while (b < le && (L[b] == ' ' || L[b] == '\t')) ++b;
          bool md2 = false;
          std::size_t gl2 = 0;
          if (b >= le) {  // blank: goes on only if an item line follows
            std::size_t nb = le;
            while (nb < L.size() && (L[nb] == '\n' || L[nb] == ' ' || L[nb] == '\t' || L[nb] == '\r')) ++nb;
            if (glyph_at(L, nb, md2, gl2) == 0) break;
          } else if (glyph_at(L, b, md2, gl2) == 0) {
            break;
          }
          stop = le;
          ls = le;
        }
      }
      for (std::size_t k = token_at_or_after(q); k < n && t.tokens[k].off < stop; ++k) token_info[k].example = true;
      done = stop;
      // the phrase: the introducer's words up to the colon, then the example's first line
      std::size_t a = c;
      while (a > 0 && c - a < 4 && !token_info[a - 1].newline_after && !token_info[a - 1].example &&
             text::trim(gap(a - 1, a)).find_first_of(",;:!?") == std::string_view::npos)
        --a;
      std::string ph = phrase(a, c) + ": " + std::string(text::utf8_prefix(first_line, 40));
      const ListMarker m = kind == 2 ? ListMarker::Numbered : ListMarker::Bullet;
      cues.push_back({m, false, kind == 1 && md, 3, static_cast<std::size_t>(token_info[c].sentence), ph});
    }
  }

  void run() {
    prepare();
    for (std::size_t i = 0; i < t.size(); ++i) scan_token(i);
    count_pending_nouns();
    count_framed_lists();
    for (const auto &[f, s] : raised_in)
      if (f == kFmtList) sent_listnoun[s] = true;
    apply_cues();
  }

  // One token: the marker phrases and cues it starts, a list verb, "top N", or a form noun asked for by the words
  // around it; advances i past the tokens it read.
  void scan_token(std::size_t &i) {
    const std::string_view w = tok(i);
    const std::uint32_t f = word_classes(i);
    read_marker_phrase(i, w);
    read_marker_glyph(i, w);
    if (read_cues(i, w, f)) return;
    if (read_list_verb(i, f)) return;
    if (read_german_list_verb(i, w)) return;
    if (read_auflisten(i, w)) return;
    if (read_top(i, w)) return;
    read_form_noun(i);
  }

  // Marker phrases: count where the sentence is about a list ("in markdown", "marked by an asterisk").
  void read_marker_phrase(std::size_t i, std::string_view w) {
    const std::size_t n = t.size();
    if ((w == "markdown" || marker_word(w)) && !negated(i) && !token_info[i].example) {
      // the phrase: "marked by an asterisk", "with dashes", "in markdown format", "markdown bullet points"
      std::size_t a = i, b = i;
      const Noun after = i + 1 < n ? form_noun(t, i + 1) : Noun{};
      if (w == "markdown" && after.fmt == kFmtList) {
        b = i + after.span;
      } else {
        while (a > 0 && i - a < 3 && same_clause(a - 1, i) && !token_info[a - 1].example &&
               !(word_classes(a - 1) & (W_DET | W_STRONG | W_STRONG_INDEF)) && form_noun(t, a - 1).fmt < 0 && number_word(tok(a - 1), needs_modifier_ignored) < 0)
          --a;
        if (w == "markdown" && (tok(i + 1) == "format" || tok(i + 1) == "formatting")) b = i + 1;
      }
      if (w == "markdown")
        sent_cues.push_back({ListMarker::Bullet, true, true, 2, static_cast<std::size_t>(token_info[i].sentence), phrase(a, b)});
      else
        sent_cues.push_back({ListMarker::Bullet, false, markdown_glyph_word(w), 2, static_cast<std::size_t>(token_info[i].sentence), phrase(a, b)});
    }
  }

  // "markiert mit *", "marked with -", "using •": a glyph right after with/mit/by/using
  void read_marker_glyph(std::size_t i, std::string_view w) {
    const std::size_t n = t.size();
    if ((w == "with" || w == "mit" || w == "by" || w == "using" || w == "durch") && !negated(i) && !token_info[i].example) {
      const std::size_t ge = i + 1 < n ? t.tokens[i + 1].off : t.lowered.size();
      std::string_view g = std::string_view(t.lowered).substr(t.tokens[i].off + t.tokens[i].len);
      g = g.substr(0, ge - (t.tokens[i].off + t.tokens[i].len));
      std::size_t q = 0;
      while (q < g.size() && (g[q] == ' ' || g[q] == '\t' || g[q] == '"' || g[q] == '\'' || g[q] == '`')) ++q;
      if (q < g.size() && (g[q] == '*' || g[q] == '-' || g[q] == '+') &&
          (q + 1 == g.size() || g[q + 1] == ' ' || g[q + 1] == '.' || g[q + 1] == ',' || g[q + 1] == ')' || g[q + 1] == '"' ||
           g[q + 1] == '\'' || g[q + 1] == '`' || g[q + 1] == ';' || g[q + 1] == '\n')) {
        std::size_t a = i;
        while (a > 0 && i - a < 2 && same_clause(a - 1, i) && form_noun(t, a - 1).fmt < 0 && !(word_classes(a - 1) & (W_DET | W_STRONG))) --a;
        sent_cues.push_back({ListMarker::Bullet, false, true, 2, static_cast<std::size_t>(token_info[i].sentence),
                             phrase(a, i) + " " + std::string(1, g[q])});
      }
    }
  }

  // Cues that ask by themselves; true for "step by step" (i then on its last token).
  bool read_cues(std::size_t &i, std::string_view w, std::uint32_t f) {
    // step by step / Schritt für Schritt / schrittweise (not in "I learned it step by step")
    if ((w == "step" && tok(i + 1) == "by" && tok(i + 2) == "step") ||
        (w == "schritt" && tok(i + 1) == "f\xc3\xbcr" && tok(i + 2) == "schritt")) {
      if (!negated(i) && !declarative_statement(i)) {
        raise(kFmtSteps, i, i + 2);
        count_near_noun(kFmtSteps, i, i + 2);
      }
      i += 2;
      return true;
    }
    if (w == "schrittweise" && !negated(i) && !declarative_statement(i)) raise(kFmtSteps, i, i);
    if ((starts(w, "tabellarisch") || w == "tabular") && !negated(i) && !declarative_statement(i)) raise(kFmtTable, i, i);
    if (w == "stichpunktartig" && !negated(i) && !declarative_statement(i)) raise(kFmtList, i, i);
    // python / bash: a code cue of the seed where the sentence names a code artifact ("a Python function",
    // "der Bash-Befehl"); the language alone ("Is Python hard to learn?") asks for no code block.
    if ((f & W_LANG) && sent_codeart[static_cast<std::size_t>(token_info[i].sentence)] && !negated(i)) raise(kFmtCode, i, i);
    return false;
  }

  // A list verb in request position ("list three reasons", "can you list …"); true when it asks.
  bool read_list_verb(std::size_t i, std::uint32_t f) {
    const std::size_t n = t.size();
    if (f & W_LISTVERB) {
      std::string_view nx = tok(i + 1);
      bool clause_first = i == 0 || !same_clause(i - 1, i);
      bool after_req = i > 0 && same_clause(i - 1, i) &&
                       ((word_classes(i - 1) & (W_PLEASE | W_COORD)) || tok(i - 1) == "also" || tok(i - 1) == "just" ||
                        tok(i - 1) == "now" || tok(i - 1) == "briefly" || tok(i - 1) == "then");
      bool modal_you = false;  // can you list / could you please list / I want you to list
      for (std::size_t q = i; q-- > 0 && i - q <= 3 && same_clause(q, i);)
        if ((word_classes(q) & W_YOU) && (tok(i - 1) == "to" || (q > 0 && (word_classes(q - 1) & W_MODALQ)) || (word_classes(i - 1) & W_PLEASE))) modal_you = true;
      bool noun_next = nx == "of" || nx == "is" || nx == "was" || nx == "are" || nx == "were" || nx == "has" ||
                       nx == "had" || nx == "goes" || nx == "price" || nx.empty() || (i + 1 < n && !same_clause(i, i + 1));
      if ((clause_first || after_req || modal_you) && !noun_next && !negated(i)) {
        std::size_t e = i;
        while (e + 1 < n && e < i + 3 && same_clause(i, e + 1)) ++e;
        raise(kFmtList, i, e, true);
        matched_noun[i] = true;
        count_after_verb(kFmtList, i);
        return true;
      }
    }
    return false;
  }

  // German "Liste … auf" / "Zähle … auf" (imperative with the particle later in the sentence), and, in
  // read_auflisten, "auflisten"/"aufzählen" in a request ("Kannst du die Tarife auflisten?", "Bitte alle
  // aufzählen"); true when it asks.
  bool read_german_list_verb(std::size_t i, std::string_view w) {
    const std::size_t n = t.size();
    if (w == "liste" || w == "zähle" || w == "zähl" || w == "listet") {
      bool clause_first = i == 0 || !same_clause(i - 1, i) ||
                          (word_classes(i - 1) & (W_PLEASE | W_COORD)) || tok(i - 1) == "du" || tok(i - 1) == "nun" || tok(i - 1) == "jetzt";
      std::string_view nx = tok(i + 1);
      bool noun_next = nx == "der" || nx == "des" || nx == "von" || nx == "ist" || nx == "war" || nx == "wird" ||
                       nx == "enthält" || nx == "mit" || nx == "für";
      if (clause_first && !noun_next && !negated(i)) {
        std::size_t auf = 0;
        for (std::size_t q = i + 1; q < n && token_info[q].sentence == token_info[i].sentence; ++q)
          if (tok(q) == "auf") auf = q;
        if (auf != 0) {
          raise(kFmtList, i, auf, true);
          matched_noun[i] = true;
          count_after_verb(kFmtList, i);
          return true;
        }
      }
    }
    return false;
  }

  // "auflisten"/"aufzählen" in a request sentence (see read_german_list_verb); true when it asks.
  bool read_auflisten(std::size_t i, std::string_view w) {
    if ((w == "auflisten" || w == "aufzählen" || w == "aufzulisten" || w == "aufzuzählen") && !negated(i) &&
        sent_request[static_cast<std::size_t>(token_info[i].sentence)]) {
      std::size_t from = static_cast<std::size_t>(clause_start[static_cast<std::size_t>(token_info[i].clause)]);
      raise(kFmtList, from, i, true);
      for (std::size_t q = from; q < i; ++q) {
        int cn = 0;
        CountRel rel;
        std::size_t cf = q;
        if (number_at(q, cn, rel, cf)) {
          add_count(kFmtList, rel, cn, cf, q + 1 < i ? q + 1 : q, q);
          break;
        }
      }
      return true;
    }
    return false;
  }

  // "top 3" in a request: a ranked list of that many items; true when a count follows (i then on it).
  bool read_top(std::size_t &i, std::string_view w) {
    const std::size_t n = t.size();
    if (w == "top" && i + 1 < n && same_clause(i, i + 1)) {
      bool nm = false;
      int cnt = number_word(tok(i + 1), nm);
      if (cnt >= 2) {
        Noun pseudo{kFmtList, 0, 1};
        std::size_t from = request_for(kFmtList, pseudo, i, i + 1);
        bool question = sent_question[static_cast<std::size_t>(token_info[i].sentence)];
        bool qword = false;  // "what are the top 5 …?", "welche sind die Top 3 …?"
        for (std::size_t q = static_cast<std::size_t>(clause_start[static_cast<std::size_t>(token_info[i].clause)]); q + 1 < i; ++q)
          qword = qword || ((word_classes(q) & W_QWORD) && (tok(q + 1) == "are" || tok(q + 1) == "were" || tok(q + 1) == "sind"));
        if (from == static_cast<std::size_t>(-1) && question && qword) from = i;  // "what are the top 5 …?"
        if (from != static_cast<std::size_t>(-1)) {
          raise(kFmtList, from, i + 1, true);
          add_count(kFmtList, CountRel::Exact, cnt, i, i + 1, i + 1);
          matched_noun[i] = true;
        }
        ++i;
        return true;
      }
    }
    return false;
  }

  // A form noun asked for by the words around it; i then on its last token.
  void read_form_noun(std::size_t &i) {
    Noun nn = form_noun(t, i);
    if (nn.fmt < 0) return;
    const std::size_t end = i + nn.span - 1;
    if (modifier_use(nn.fmt, tok(end + 1), tok(end + 2), tok(end + 3))) {
      i = end;
      return;
    }
    if (nn.fmt == kFmtTable && sent_db[static_cast<std::size_t>(token_info[i].sentence)] && tok(i) != "spalten" && tok(i) != "columns") {
      i = end;  // "create a table in Postgres": a database table
      return;
    }
    if (nn.fmt == kFmtList && !negated(i)) sent_listnoun[static_cast<std::size_t>(token_info[i].sentence)] = true;
    std::size_t from = request_for(nn.fmt, nn, i, end);
    std::size_t last = end;
    // A counted item noun in an instruction sentence ("… and must contain exactly 4 bullet points").
    if (from == static_cast<std::size_t>(-1) && nn.fmt == kFmtList) from = counted_request(nn, i, end, last);
    // Nouns such as "Punkte"/"points"/"items" name a list only when counted ("genau drei Punkte").
    if (from != static_cast<std::size_t>(-1) && (count_near_noun(nn.fmt, i, end) || !(nn.flags & N_COUNTED_ONLY))) {
      raise(nn.fmt, std::min(from, i), std::max(from, last));
      matched_noun[i] = true;
      noun_marker(nn, i, end);
    } else if (from == static_cast<std::size_t>(-1) && (nn.fmt == kFmtList || nn.fmt == kFmtSteps) && !negated(i)) {
      pending.push_back({nn.fmt, i, end});
    }
    i = end;
  }

  // A counted noun in a sentence that asks for the format elsewhere: "Nenne mindestens 5 Punkte als Liste",
  // "Give 3 examples, as a bulleted list" — the count belongs to that list.
  void count_pending_nouns() {
    for (const Pending &pd : pending) {
      const auto sent = static_cast<std::size_t>(token_info[pd.i].sentence);
      for (const auto &[f, s] : raised_in)
        if (s == sent && (f == pd.fmt || (f == kFmtList && pd.fmt == kFmtList))) {
          count_near_noun(pd.fmt, pd.i, pd.end);
          break;
        }
    }
  }

  // Any counted noun in a sentence that asks for a list or steps by its frame alone: "Nenne genau drei Vorteile
  // in Stichpunkten", "Give me 5 tips as a bulleted list" — the first "N <noun>" of that sentence counts its
  // items, unless the noun is a unit ("2 Jahre", "100 words") or the count qualifies something ("more than 2").
  void count_framed_lists() {
    for (const auto &[f, s] : raised_in) {
      if ((f != kFmtList && f != kFmtSteps) || !out[static_cast<std::size_t>(f)].counts.empty()) continue;
      for (std::size_t q = 0; q + 1 < t.size(); ++q) {
        if (static_cast<std::size_t>(token_info[q].sentence) != s) continue;
        int cn = 0;
        CountRel rel;
        std::size_t cf = q;
        if (!number_at(q, cn, rel, cf)) continue;
        bool nm = false;
        const std::string_view nx = tok(q + 1), before = q > 0 ? tok(q - 1) : std::string_view{};
        if (static_cast<std::size_t>(token_info[q + 1].sentence) != s || !same_clause(q, q + 1) || number_word(nx, nm) > 0 ||
            is_unit_word(nx) || before == "than" || before == "als" || cn < 2 || cn > 100)
          break;
        // a count of a form noun was read (or dropped) with that noun; "each section … 2 points" is per section
        if (token_info[q].example || form_noun(t, q + 1).fmt >= 0 || distributive(cf, q + 1)) break;
        add_count(f, rel, cn, cf, q + 1, q);
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

const char *list_marker_name(ListMarker m, bool markdown) {
  switch (m) {
    case ListMarker::Any: return "any";
    case ListMarker::Bullet: return markdown ? "markdown bullet" : "bullet";
    case ListMarker::Numbered: return "numbered";
  }
  return "any";
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
