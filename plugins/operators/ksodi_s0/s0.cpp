#include "s0.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "ksodi/detect.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

using detect::KeywordSet;
using text::Line;
using text::LineKind;

namespace {

// Format expectation keywords (versioned with detect::kDetectorVersion).
const KeywordSet &kw_json() {
  static const KeywordSet k{"json", "jsonschema", "json-schema"};
  return k;
}
const KeywordSet &kw_list() {
  static const KeywordSet k{"list", "bullet*", "itemize*", "itemise*", "liste", "listet", "listenform", "auflist*",
                            "stichpunkt*", "aufzählung*"};
  return k;
}
const KeywordSet &kw_steps() {
  static const KeywordSet k{"steps", "step by step", "schritte", "schritt für schritt", "schrittweise"};
  return k;
}
const KeywordSet &kw_table() {
  static const KeywordSet k{"table", "tables", "tabelle", "tabellen", "tabellarisch*", "tabellenform", "spalten"};
  return k;
}
const KeywordSet &kw_code() {
  static const KeywordSet k{"code block", "code blocks", "codeblock*", "python", "bash"};
  return k;
}
const KeywordSet &kw_headings() {
  static const KeywordSet k{"überschrift*", "zwischenüberschrift*", "heading*"};
  return k;
}

// "```" / "##" count as a format wish only where they are *mentioned* inside a line ("wrap code in ```"),
// not where a prompt merely uses markdown itself (a line starting with ``` or ##).
bool mentions_marker(std::string_view s, std::string_view marker) {
  for (std::size_t pos = s.find(marker); pos != std::string_view::npos; pos = s.find(marker, pos + marker.size())) {
    std::size_t ls = s.rfind('\n', pos);
    ls = ls == std::string_view::npos ? 0 : ls + 1;
    if (!text::trim(s.substr(ls, pos - ls)).empty()) return true;
  }
  return false;
}

std::string_view fence_content(std::string_view text, const std::vector<Line> &lines, std::size_t open, std::size_t &close) {
  close = open + 1;
  while (close < lines.size() && lines[close].kind == LineKind::Code) ++close;
  if (close == open + 1) return {};
  std::size_t b = lines[open + 1].offset;
  std::size_t e = lines[close - 1].offset + lines[close - 1].raw.size();
  return text.substr(b, e - b);
}

bool json_container(std::string_view s) {
  s = text::trim(s);
  if (s.empty() || (s.front() != '{' && s.front() != '[')) return false;
  return nlohmann::json::accept(s.begin(), s.end());
}

bool lower_starts(std::string_view s, std::string_view p) {
  if (s.size() < p.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != p[i]) return false;
  return true;
}

bool json_check(std::string_view answer, const std::vector<Line> &lines, std::string &ev) {
  std::size_t close = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].kind == LineKind::FenceOpen && lower_starts(lines[i].info, "json")) {
      bool ok = json_container(fence_content(answer, lines, i, close));
      ev = ok ? "first ```json block parses" : "first ```json block does not parse as a JSON object/array";
      return ok;
    }
  }
  if (json_container(answer)) {
    ev = "whole text parses as JSON";
    return true;
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].kind == LineKind::FenceOpen && lines[i].info.empty()) {
      std::string_view c = text::trim(fence_content(answer, lines, i, close));
      if (!c.empty() && (c.front() == '{' || c.front() == '[')) {
        bool ok = json_container(c);
        ev = ok ? "first unlabelled ``` block holding JSON parses" : "first unlabelled ``` block holding JSON does not parse";
        return ok;
      }
    }
  }
  // JSON written beside prose without a fence: from the first '{' / '[' to the last matching closer.
  std::size_t ob = answer.find_first_of("{[");
  if (ob != std::string_view::npos) {
    char closer = answer[ob] == '{' ? '}' : ']';
    std::size_t cb = answer.rfind(closer);
    if (cb != std::string_view::npos && cb > ob && json_container(answer.substr(ob, cb - ob + 1))) {
      ev = "JSON embedded in the text parses";
      return true;
    }
  }
  ev = "no parseable JSON object/array (no ```json block, whole text is not JSON)";
  return false;
}

bool list_check(const std::vector<Line> &lines, double min_share, double &share, std::string &ev) {
  int non_blank = 0, items = 0;
  for (const Line &L : lines) {
    if (L.kind == LineKind::Blank || L.kind == LineKind::Code || L.kind == LineKind::FenceOpen || L.kind == LineKind::FenceClose) continue;
    ++non_blank;
    if (L.kind == LineKind::Bullet || L.kind == LineKind::Numbered) ++items;
  }
  share = non_blank > 0 ? static_cast<double>(items) / non_blank : 0.0;
  bool ok = items >= 2 && share >= min_share;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%d of %d non-blank lines are list items (share %.3f, needs >= 2 items and >= %.2f)", items,
                non_blank, share, min_share);
  ev = buf;
  return ok;
}

bool steps_check(std::string_view answer, const std::vector<Line> &lines, std::string &ev) {
  int prev = -1;
  for (const Line &L : lines) {
    if (L.kind != LineKind::Numbered) continue;
    if (prev >= 0 && L.number == prev + 1) {
      ev = "numbered lines in ascending order (" + std::to_string(prev) + ", " + std::to_string(L.number) + ")";
      return true;
    }
    prev = L.number;
  }
  // Inline enumerations: "Schritt 1 … Schritt 2", "Step 1 … Step 2", "1) … 2)" (outside code).
  std::vector<int> nums;
  for (const Line &L : lines) {
    if (L.kind == LineKind::Code || L.kind == LineKind::FenceOpen || L.kind == LineKind::FenceClose) continue;
    text::TokenizedText t;
    t.assign(L.raw);
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      std::string_view w = t.token(i), d = t.token(i + 1);
      if ((w == "schritt" || w == "step") && d.size() <= 2 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; }))
        nums.push_back(std::stoi(std::string(d)));
    }
    std::string_view r = L.raw;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (r[i] < '0' || r[i] > '9' || (i > 0 && r[i - 1] != ' ' && r[i - 1] != '(')) continue;
      std::size_t j = i;
      while (j < r.size() && j - i < 3 && r[j] >= '0' && r[j] <= '9') ++j;
      if (j < r.size() && r[j] == ')' && (i == 0 || r[i - 1] == ' ') && j - i <= 2) nums.push_back(std::stoi(std::string(r.substr(i, j - i))));
      i = j;
    }
  }
  for (std::size_t a = 0; a < nums.size(); ++a)
    for (std::size_t b = a + 1; b < nums.size(); ++b)
      if (nums[b] == nums[a] + 1) {
        ev = "inline step markers in ascending order (" + std::to_string(nums[a]) + ", " + std::to_string(nums[b]) + ")";
        return true;
      }
  (void)answer;
  ev = "no ascending numbering (1. 2. / 1) 2) / Schritt 1, Schritt 2)";
  return false;
}

bool table_check(const std::vector<Line> &lines, std::string &ev) {
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
    if (lines[i].kind == LineKind::TableSep && lines[i - 1].kind == LineKind::TableRow && lines[i + 1].kind == LineKind::TableRow) {
      ev = "markdown table with |---| separator";
      return true;
    }
  }
  // CSV-like rows: >= 3 consecutive lines with the same number (>= 1) of ';', tab or ',' separators.
  for (char d : {';', '\t', ','}) {
    int run = 0;
    std::size_t cnt = 0;
    for (const Line &L : lines) {
      bool usable = L.kind == LineKind::Text || L.kind == LineKind::Code;
      std::size_t c = usable ? static_cast<std::size_t>(std::count(L.raw.begin(), L.raw.end(), d)) : 0;
      std::string_view tr = text::trim(L.raw);
      if (d == ',' && !tr.empty() && (tr.back() == '.' || tr.size() > 160)) c = 0;  // prose, not rows
      if (c >= 1 && c == cnt) {
        ++run;
      } else {
        run = c >= 1 ? 1 : 0;
        cnt = c;
      }
      if (run >= 3) {
        ev = std::string("CSV-like rows separated by '") + (d == '\t' ? std::string("\\t") : std::string(1, d)) + "'";
        return true;
      }
    }
  }
  ev = "no markdown table (header, |---| separator, row) and no CSV-like rows";
  return false;
}

bool code_check(const std::vector<Line> &lines, std::string &ev) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].kind != LineKind::FenceOpen) continue;
    std::size_t j = i + 1;
    bool content = false;
    while (j < lines.size() && lines[j].kind == LineKind::Code) {
      if (!text::trim(lines[j].raw).empty()) content = true;
      ++j;
    }
    if (j < lines.size() && lines[j].kind == LineKind::FenceClose && content) {
      ev = "closed fenced code block";
      return true;
    }
  }
  ev = "no closed, non-empty fenced code block";
  return false;
}

int count_kind(const std::vector<Line> &lines, LineKind k) {
  return static_cast<int>(std::count_if(lines.begin(), lines.end(), [&](const Line &L) { return L.kind == k; }));
}

}  // namespace

bool check_json(std::string_view answer, std::string &evidence) { return json_check(answer, text::classify_lines(answer), evidence); }
bool check_list(std::string_view answer, double min_share, double &share, std::string &evidence) {
  return list_check(text::classify_lines(answer), min_share, share, evidence);
}
bool check_steps(std::string_view answer, std::string &evidence) { return steps_check(answer, text::classify_lines(answer), evidence); }
bool check_table(std::string_view answer, std::string &evidence) { return table_check(text::classify_lines(answer), evidence); }
bool check_codeblock(std::string_view answer, std::string &evidence) { return code_check(text::classify_lines(answer), evidence); }
bool check_headings(std::string_view answer, std::string &evidence) {
  int n = count_kind(text::classify_lines(answer), LineKind::Heading);
  evidence = std::to_string(n) + " heading line(s)";
  return n >= 1;
}

S0Result compute_s0(const S0Input &in, const S0Params &p, const EmbedFn &embed) {
  S0Result r;
  // 1. Expected formats from system prompt, tool profile and (optionally) user text.
  struct Source {
    const char *name;
    const std::string *text;
  };
  std::vector<Source> sources{{"system_prompt", &in.system_prompt}, {"tool_profile", &in.tool_profile}};
  if (p.use_user_text) sources.push_back({"user_text", &in.user_text});
  std::vector<text::TokenizedText> tt(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) tt[i].assign(*sources[i].text);
  auto detect = [&](const char *fmt, const KeywordSet &kw, const char *raw_marker) {
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const char *hit = kw.find(tt[i], true);
      std::string ev;
      if (hit != nullptr) ev = std::string(sources[i].name) + ": '" + hit + "'";
      else if (raw_marker != nullptr && mentions_marker(*sources[i].text, raw_marker)) ev = std::string(sources[i].name) + ": '" + raw_marker + "'";
      // "schema" alone means JSON only where the source also spells out a structure ({...}).
      else if (std::string_view(fmt) == "JSON" && sources[i].text->find('{') != std::string::npos) {
        static const KeywordSet schema{"schema"};
        if (const char *s = schema.find(tt[i], true)) ev = std::string(sources[i].name) + ": '" + s + "' with an inline {…} structure";
      }
      if (!ev.empty()) {
        r.expectations.push_back(fmt);
        r.expectation_evidence[fmt] = ev;
        return;
      }
    }
  };
  detect("JSON", kw_json(), nullptr);
  detect("LIST", kw_list(), nullptr);
  detect("STEPS", kw_steps(), nullptr);
  detect("TABLE", kw_table(), nullptr);
  detect("CODEBLOCK", kw_code(), "```");
  detect("HEADINGS", kw_headings(), "##");

  // 2. Format conformance F.
  const std::string_view answer = in.answer;
  const std::vector<Line> lines = text::classify_lines(answer);
  int passed = 0;
  for (const std::string &f : r.expectations) {
    std::string ev;
    bool ok = false;
    if (f == "JSON") ok = json_check(answer, lines, ev);
    else if (f == "LIST") ok = list_check(lines, p.list_min_share, r.list_share, ev);
    else if (f == "STEPS") ok = steps_check(answer, lines, ev);
    else if (f == "TABLE") ok = table_check(lines, ev);
    else if (f == "CODEBLOCK") ok = code_check(lines, ev);
    else if (f == "HEADINGS") {
      int n = count_kind(lines, LineKind::Heading);
      ok = n >= 1;
      ev = std::to_string(n) + " heading line(s)";
    }
    r.format_passed[f] = ok;
    r.format_evidence[f] = ev;
    passed += ok ? 1 : 0;
  }
  if (r.expectations.empty()) {
    r.F = p.f_neutral;
    r.no_explicit_format = true;
  } else {
    r.F = static_cast<double>(passed) / static_cast<double>(r.expectations.size());
  }

  // 3. Structure G_str.
  r.n_headings = count_kind(lines, LineKind::Heading);
  r.n_bullets = count_kind(lines, LineKind::Bullet);
  r.n_numbered = count_kind(lines, LineKind::Numbered);
  const std::vector<text::Paragraph> paras = text::split_paragraphs(answer, lines);
  r.n_paragraphs = static_cast<int>(paras.size());
  r.n_sentences = static_cast<int>(text::split_sentences(answer, lines).size());
  const int markers = r.n_headings + r.n_numbered + r.n_bullets;
  r.G_str = clip01((markers + std::min(r.n_paragraphs, 3)) / p.K);
  if (!text::trim(answer).empty() && r.n_sentences <= 1 && markers == 0 && r.G_str < p.short_answer_min) {
    r.G_str = p.short_answer_min;  // a one-sentence answer cannot show structure; do not push it towards 0
    r.short_answer_guardrail = true;
  }

  // 4. Redundancy R_red: mean pairwise similarity of paragraphs.
  if (paras.size() >= 2) {
    std::vector<std::string_view> ptxt;
    ptxt.reserve(paras.size());
    for (const auto &pa : paras) ptxt.push_back(pa.text);
    if (p.redundancy == Redundancy::Jaccard) {
      r.similarity_model_id = "jaccard-tokens";
      std::vector<std::unordered_set<std::string>> sets;
      for (auto t : ptxt) {
        auto toks = text::tokenize(t);
        sets.emplace_back(toks.begin(), toks.end());
      }
      for (std::size_t i = 0; i < sets.size(); ++i)
        for (std::size_t j = i + 1; j < sets.size(); ++j) {
          std::size_t inter = 0;
          for (const auto &w : sets[i]) inter += sets[j].count(w);
          std::size_t uni = sets[i].size() + sets[j].size() - inter;
          r.paragraph_similarities.push_back(uni == 0 ? 0.0 : static_cast<double>(inter) / static_cast<double>(uni));
        }
    } else {
      EmbedResult e = embed(ptxt);
      r.similarity_model_id = e.model_id;
      for (std::size_t i = 0; i < ptxt.size(); ++i)
        for (std::size_t j = i + 1; j < ptxt.size(); ++j) r.paragraph_similarities.push_back(clip01(cosine(e.row(i), e.row(j), e.dim)));
    }
    double s = 0;
    for (double v : r.paragraph_similarities) s += v;
    r.R_red = clip01(s / static_cast<double>(r.paragraph_similarities.size()));
  }

  // 5. S0.
  r.alpha = p.alpha;
  r.alpha_source = "params";
  if (auto it = p.alpha_by_tool_profile.find(in.tool_profile_id); !in.tool_profile_id.empty() && it != p.alpha_by_tool_profile.end()) {
    r.alpha = it->second;
    r.alpha_source = "tool_profile:" + in.tool_profile_id;
  }
  r.S0 = clip01(r.alpha * r.F + p.beta * r.G_str - p.gamma * r.R_red);
  return r;
}

}  // namespace ksodi
