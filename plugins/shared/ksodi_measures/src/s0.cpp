#include "ksodi_measures/s0.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "ksodi/format_requests.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

using detect::KeywordSet;
using text::Line;
using text::LineKind;

namespace {

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

std::string item_text(std::string_view s) { return std::string(text::utf8_prefix(s, 60)); }

// A top-level list item and its marker: 'm' markdown bullet (- * +), 'o' other bullet (• ◦ ‣ – ▪), 'n' numbered.
struct ListItem {
  std::size_t line;
  char marker;
};
char item_marker(const Line &L) {
  if (L.kind == LineKind::Numbered) return 'n';
  const std::string_view r = text::trim(L.raw);
  return !r.empty() && (r[0] == '-' || r[0] == '*' || r[0] == '+') ? 'm' : 'o';
}
struct BlockDetail {
  ListBlock b;
  std::vector<ListItem> items;  // its top-level items
};

std::vector<BlockDetail> find_list_blocks(const std::vector<Line> &lines) {
  struct B {
    BlockDetail d;
    int first_num = -1, last_num = -1;  // numbers of the first / last top-level item (-1: a bullet)
  };
  std::vector<B> out;
  bool active = false, blank_pending = false, fence_inside = false;
  int base = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line &L = lines[i];
    const bool item = L.kind == LineKind::Bullet || L.kind == LineKind::Numbered;
    if (fence_inside) {  // a fenced block that belongs to an item
      if (L.kind == LineKind::FenceClose) fence_inside = false;
      continue;
    }
    if (item) {
      const int num = L.kind == LineKind::Numbered ? L.number : -1;
      if (!active) {
        active = true;
        base = L.indent;
        B nb;
        nb.d.b.first_line = nb.d.b.last_line = i;
        nb.d.b.first_item = L.content;
        nb.d.items.push_back({i, item_marker(L)});
        nb.first_num = nb.last_num = num;
        out.push_back(std::move(nb));
      } else if (L.indent <= base + 1) {
        B &cur = out.back();
        cur.d.b.last_line = i;
        cur.d.items.push_back({i, item_marker(L)});
        cur.last_num = num;
        base = std::min(base, L.indent);
      }  // else: a nested item, part of the item above
      blank_pending = false;
      continue;
    }
    if (!active) continue;
    if (L.kind == LineKind::Blank) {
      blank_pending = true;
      continue;
    }
    if (L.indent > base) {  // indented continuation (text, code, a nested fence)
      if (L.kind == LineKind::FenceOpen) fence_inside = true;
      continue;
    }
    if (!blank_pending && L.kind == LineKind::Text) continue;  // lazy continuation of the item's paragraph
    active = false;
    blank_pending = false;
  }
  // A numbered list interrupted by prose continues where its numbering does: "1. … 2. … <text> 3. …".
  std::vector<BlockDetail> merged;
  int last_num = -2;
  for (B &x : out) {
    if (!merged.empty() && x.first_num >= 2 && x.first_num == last_num + 1) {
      merged.back().b.last_line = x.d.b.last_line;
      merged.back().items.insert(merged.back().items.end(), x.d.items.begin(), x.d.items.end());
    } else {
      merged.push_back(std::move(x.d));
    }
    last_num = x.last_num;
  }
  for (BlockDetail &d : merged) {
    d.b.n_items = static_cast<int>(d.items.size());
    for (const ListItem &it : d.items) {
      d.b.n_numbered += it.marker == 'n';
      d.b.n_bullets += it.marker != 'n';
      d.b.n_markdown_bullets += it.marker == 'm';
    }
  }
  return merged;
}

// What a LIST request asks of the items: the marker, and whether a count names the answer's items.
struct ListSpec {
  ListMarker marker = ListMarker::Any;
  bool markdown = false;
  bool mismatch_fails = true;
  bool whole_answer = false;
  std::string phrase;
};
bool marker_matches(const ListSpec &s, char m) {
  switch (s.marker) {
    case ListMarker::Any: return true;
    case ListMarker::Bullet: return m == 'm' || (m == 'o' && !s.markdown);
    case ListMarker::Numbered: return m == 'n';
  }
  return true;
}

// LIST: the answer's items of the requested marker — in the largest list block (most such top-level items; the
// first on a tie), or, where a count names the answer's items ("exactly 4 bullet points"), all top-level items
// of the answer — number >= min_items (2; 1 when the request allows a single item), and, only if
// list_min_share > 0, that share of the non-blank lines outside code are items. Items of another marker than
// the one asked for are a marker mismatch: not counted when spec.mismatch_fails, counted otherwise; reported.
bool list_check(const std::vector<Line> &lines, double min_share, int min_items, double &share, std::string &ev,
                FormatItems *items, const ListSpec &spec = ListSpec{}) {
  int non_blank = 0, n_item_lines = 0;
  for (const Line &L : lines) {
    if (L.kind == LineKind::Blank || L.kind == LineKind::Code || L.kind == LineKind::FenceOpen || L.kind == LineKind::FenceClose) continue;
    ++non_blank;
    if (L.kind == LineKind::Bullet || L.kind == LineKind::Numbered) ++n_item_lines;
  }
  share = non_blank > 0 ? static_cast<double>(n_item_lines) / non_blank : 0.0;
  const std::vector<BlockDetail> blocks = find_list_blocks(lines);
  auto counted = [&](const ListItem &it) { return marker_matches(spec, it.marker) || !spec.mismatch_fails; };
  int n_other = 0;
  std::vector<const ListItem *> chosen;  // the items counted
  const BlockDetail *best = nullptr;
  int best_n = 0;
  for (const BlockDetail &b : blocks) {
    int m = 0;
    for (const ListItem &it : b.items) {
      n_other += !marker_matches(spec, it.marker);
      if (!counted(it)) continue;
      ++m;
      if (spec.whole_answer) chosen.push_back(&it);
    }
    if (m > best_n) {
      best = &b;
      best_n = m;
    }
  }
  if (!spec.whole_answer && best != nullptr)
    for (const ListItem &it : best->items)
      if (counted(it)) chosen.push_back(&it);
  const int n = static_cast<int>(chosen.size());
  bool ok = n >= min_items;
  const char *marker_name = list_marker_name(spec.marker, spec.markdown);
  std::string other_desc;  // what the other items are
  if (n_other > 0) {
    other_desc = spec.marker == ListMarker::Numbered ? "bullets" : spec.markdown ? "not markdown bullets (- * +)" : "numbered";
    other_desc = "marker mismatch: " + std::to_string(n_other) + " top-level item(s) " + other_desc + ", requested " + marker_name +
                 " ('" + spec.phrase + "')" + (spec.mismatch_fails ? ", not counted (list_marker_mismatch = fail)" : ", counted (list_marker_mismatch = count)");
  }
  if (blocks.empty()) {
    ev = "no list block (no line starting with -, *, •, 1. …)";
  } else if (chosen.empty()) {
    ev = "no list item of the requested marker in " + std::to_string(blocks.size()) + " block(s); " + other_desc;
  } else {
    char buf[128];
    const std::size_t fl = chosen.front()->line + 1, ll = chosen.back()->line + 1;
    if (spec.whole_answer)
      std::snprintf(buf, sizeof buf, "whole answer: %d top-level item(s), lines %zu-%zu", n, fl, ll);
    else
      std::snprintf(buf, sizeof buf, "largest list block: %d item(s), lines %zu-%zu", n, fl, ll);
    ev = buf;
    ev += " (first: '" + item_text(lines[chosen.front()->line].content) + "'), " + std::to_string(blocks.size()) + " block(s)";
    if (!other_desc.empty()) ev += "; " + other_desc;
    if (!ok) ev += "; needs >= " + std::to_string(min_items) + " items";
  }
  if (min_share > 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "; item share %.3f of %d non-blank lines, needs >= %.2f", share, non_blank, min_share);
    ev += buf;
    ok = ok && share >= min_share;
  }
  if (items != nullptr) {
    items->n_items = n;
    items->n_blocks = static_cast<int>(blocks.size());
    if (!chosen.empty()) {
      items->first_line = static_cast<int>(chosen.front()->line) + 1;
      items->last_line = static_cast<int>(chosen.back()->line) + 1;
      items->first_item = item_text(lines[chosen.front()->line].content);
    }
    items->counted_over = spec.whole_answer ? "whole answer" : "largest list block";
    items->marker_requested = marker_name;
    items->marker_phrase = spec.phrase;
    items->n_other_marker = n_other;
    items->marker_mismatch = n_other > 0;
  }
  return ok;
}

// Runs of step numbers in text order: a run goes on with n+1 (or "1." again under markdown's lazy numbering
// 1. 1. 1.), a 1 starts a new run, any other number makes the run unordered.
struct StepRun {
  std::vector<int> numbers;
  std::vector<std::size_t> at;  // line index of each number
  bool ordered = true;
};
std::vector<StepRun> step_runs(const std::vector<int> &nums, const std::vector<std::size_t> &at) {
  std::vector<StepRun> runs;
  for (std::size_t k = 0; k < nums.size(); ++k) {
    const int n = nums[k];
    if (!runs.empty()) {
      StepRun &r = runs.back();
      const int prev = r.numbers.back();
      const bool all_ones = std::all_of(r.numbers.begin(), r.numbers.end(), [](int v) { return v == 1; });
      if (n == prev + 1 || (n == 1 && all_ones)) {
        r.numbers.push_back(n);
        r.at.push_back(at[k]);
        continue;
      }
      if (n != 1) {
        r.numbers.push_back(n);
        r.at.push_back(at[k]);
        r.ordered = false;
        continue;
      }
    }
    runs.push_back({{n}, {at[k]}, true});
  }
  return runs;
}
const StepRun *best_ordered(const std::vector<StepRun> &runs) {
  const StepRun *best = nullptr;
  for (const StepRun &r : runs)
    if (r.ordered && r.numbers.size() >= 2 && (best == nullptr || r.numbers.size() > best->numbers.size())) best = &r;
  return best;
}
std::string join_numbers(const std::vector<int> &v) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < 12; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > 12) s += ", …";
  return s;
}

FormatItems step_items(int n, int first_line, int last_line, std::string first_item, int n_blocks) {
  FormatItems it;
  it.n_items = n;
  it.first_line = first_line;
  it.last_line = last_line;
  it.first_item = std::move(first_item);
  it.n_blocks = n_blocks;
  return it;
}

// STEPS: >= 2 numbered steps in ascending order — numbered lines (1. 2. / 1) 2) / Schritt 1: / Step 2 -), or
// inline markers in the prose (Schritt 1 … Schritt 2, Step 1 … Step 2, 1) … 2)). Sub-steps (more indented
// numbered lines) are not part of the top-level run.
bool steps_check(const std::vector<Line> &lines, std::string &ev, FormatItems *items) {
  std::vector<int> nums;
  std::vector<std::size_t> at;
  int base = -1;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line &L = lines[i];
    if (L.kind != LineKind::Numbered) continue;
    if (base >= 0 && L.indent > base + 1) continue;  // a nested sub-step
    base = L.indent;
    nums.push_back(L.number);
    at.push_back(i);
  }
  std::vector<StepRun> runs = step_runs(nums, at);
  if (const StepRun *b = best_ordered(runs)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%zu numbered steps in ascending order (%d-%d), lines %zu-%zu", b->numbers.size(),
                  b->numbers.front(), b->numbers.back(), b->at.front() + 1, b->at.back() + 1);
    ev = buf;
    ev += " (first: '" + item_text(lines[b->at.front()].content) + "')";
    if (items != nullptr) *items = step_items(static_cast<int>(b->numbers.size()), static_cast<int>(b->at.front()) + 1,
                                    static_cast<int>(b->at.back()) + 1, item_text(lines[b->at.front()].content),
                                    static_cast<int>(runs.size()));
    return true;
  }
  std::string line_reason;
  for (const StepRun &r : runs)
    if (!r.ordered) {
      line_reason = "numbered lines not in ascending order (" + join_numbers(r.numbers) + ", lines " +
                    std::to_string(r.at.front() + 1) + "-" + std::to_string(r.at.back() + 1) + ")";
      break;
    }
  // Inline enumerations: "Schritt 1 … Schritt 2", "Step 1 … Step 2", "1) … 2)" (outside code).
  std::vector<int> inl;
  std::vector<std::size_t> inl_at;
  for (std::size_t li = 0; li < lines.size(); ++li) {
    const Line &L = lines[li];
    if (L.kind == LineKind::Code || L.kind == LineKind::FenceOpen || L.kind == LineKind::FenceClose) continue;
    text::TokenizedText t;
    t.assign(L.raw);
    std::vector<std::pair<std::size_t, int>> found;  // byte offset in the line, number
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      std::string_view w = t.token(i), d = t.token(i + 1);
      if ((w == "schritt" || w == "step") && d.size() <= 2 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; }))
        found.emplace_back(t.tokens[i].off, std::stoi(std::string(d)));
    }
    std::string_view r = L.raw;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (r[i] < '0' || r[i] > '9' || (i > 0 && r[i - 1] != ' ' && r[i - 1] != '(')) continue;
      std::size_t j = i;
      while (j < r.size() && j - i < 3 && r[j] >= '0' && r[j] <= '9') ++j;
      if (j < r.size() && r[j] == ')' && (i == 0 || r[i - 1] == ' ') && j - i <= 2) found.emplace_back(i, std::stoi(std::string(r.substr(i, j - i))));
      i = j;
    }
    std::sort(found.begin(), found.end());
    for (const auto &f : found) {
      inl.push_back(f.second);
      inl_at.push_back(li);
    }
  }
  std::vector<StepRun> iruns = step_runs(inl, inl_at);
  if (const StepRun *b = best_ordered(iruns)) {
    ev = "inline step markers in ascending order (" + join_numbers(b->numbers) + "), lines " + std::to_string(b->at.front() + 1) +
         "-" + std::to_string(b->at.back() + 1);
    if (items != nullptr) *items = step_items(static_cast<int>(b->numbers.size()), static_cast<int>(b->at.front()) + 1,
                                    static_cast<int>(b->at.back()) + 1, item_text(text::trim(lines[b->at.front()].raw)),
                                    static_cast<int>(iruns.size()));
    return true;
  }
  if (items != nullptr) *items = step_items(0, 0, 0, "", static_cast<int>(runs.size()));
  ev = !line_reason.empty() ? line_reason : "no ascending numbering (1. 2. / 1) 2) / Schritt 1, Schritt 2)";
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
  return list_check(text::classify_lines(answer), min_share, 2, share, evidence, nullptr);
}
std::vector<ListBlock> list_blocks(std::string_view answer) {
  std::vector<ListBlock> out;
  for (BlockDetail &d : find_list_blocks(text::classify_lines(answer))) out.push_back(d.b);
  return out;
}
bool check_steps(std::string_view answer, std::string &evidence) { return steps_check(text::classify_lines(answer), evidence, nullptr); }
bool check_steps(std::string_view answer, std::string &evidence, int &n_steps) {
  FormatItems it;
  bool ok = steps_check(text::classify_lines(answer), evidence, &it);
  n_steps = it.n_items;
  return ok;
}
bool check_table(std::string_view answer, std::string &evidence) { return table_check(text::classify_lines(answer), evidence); }
bool check_codeblock(std::string_view answer, std::string &evidence) { return code_check(text::classify_lines(answer), evidence); }
bool check_headings(std::string_view answer, std::string &evidence) {
  int n = count_kind(text::classify_lines(answer), LineKind::Heading);
  evidence = std::to_string(n) + " heading line(s)";
  return n >= 1;
}

namespace {

// 1. The formats the system prompt, the tool profile and (optionally) the user text ask for, with evidence.
FormatRequests expected_formats(const S0Input &in, const S0Params &p, S0Result &r) {
  struct Source {
    const char *name;
    const std::string *text;
  };
  std::vector<Source> sources{{"system_prompt", &in.system_prompt}, {"tool_profile", &in.tool_profile}};
  if (p.use_user_text) sources.push_back({"user_text", &in.user_text});
  std::vector<text::TokenizedText> tt(sources.size());
  FormatRequests req;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::string &src = *sources[i].text;
    if (src.empty()) continue;
    tt[i].assign(src);
    // What the source asks for (request phrases, cues, counts; ksodi/format_requests.hpp).
    detect_format_requests(sources[i].name, src, tt[i], req);
    auto raise = [&](int f, std::string ev) {
      if (req[static_cast<std::size_t>(f)].raised) return;
      req[static_cast<std::size_t>(f)].raised = true;
      req[static_cast<std::size_t>(f)].evidence = std::string(sources[i].name) + ": " + ev;
    };
    // "```" / "##" mentioned inside a line ("wrap code in ```", "Überschriften (##)").
    if (mentions_marker(src, "```")) raise(kFmtCode, "'```'");
    if (mentions_marker(src, "##")) raise(kFmtHeadings, "'##'");
    // "schema" alone means JSON only where the source also spells out a structure ({...}).
    if (src.find('{') != std::string::npos) {
      static const KeywordSet schema{"schema"};
      if (const char *sh = schema.find(tt[i], true)) raise(kFmtJson, std::string("'") + sh + "' with an inline {…} structure");
    }
  }
  // "List the planets. Answer in JSON." / "Liste die Tarife als Tabelle auf": where a prompt asks for JSON or a
  // table, a list *verb* names the task, and the JSON array or the table is the list — no LIST of its own.
  FormatRequest &list = req[static_cast<std::size_t>(kFmtList)];
  if (list.raised && list.by_task_verb && (req[static_cast<std::size_t>(kFmtJson)].raised || req[static_cast<std::size_t>(kFmtTable)].raised)) {
    list.raised = false;
    list.counts.clear();
  }
  for (int f = 0; f < kNumFormats; ++f) {
    if (!req[static_cast<std::size_t>(f)].raised) continue;
    r.expectations.push_back(kFormats[f]);
    r.expectation_evidence[kFormats[f]] = req[static_cast<std::size_t>(f)].evidence;
  }
  return req;
}

// Whether the answer is a list as requested (the marker and counts the request named).
bool list_conforms(const std::vector<Line> &lines, const FormatRequest &lr, const S0Params &p, S0Result &r,
                   std::string &ev) {
  // A request that allows a single item ("exactly one bullet point", "at most 1") lowers the minimum to 1.
  int min_items = 2;
  for (const CountRequirement &c : lr.counts)
    if (c.n <= 1) min_items = 1;  // "exactly one", "at most 1", "one to three", "at least one"
  ListSpec spec;
  spec.marker = lr.marker;
  spec.markdown = lr.marker_markdown;
  spec.mismatch_fails = p.list_marker_mismatch_fails;
  spec.phrase = lr.marker_phrase;
  for (const CountRequirement &c : lr.counts) spec.whole_answer = spec.whole_answer || c.whole_answer;
  return list_check(lines, p.list_min_share, min_items, r.list_share, ev, &r.format_items["LIST"], spec);
}

// Requested counts: every one must hold for the items counted (LIST: the largest list block — the answer's main
// list; STEPS: the best ordered run). Returns whether all hold; the evidence says each.
bool counts_hold(const std::string &f, const std::vector<CountRequirement> &counts, S0Result &r, std::string &ev) {
  bool ok = true;
  const int found = r.format_items[f].n_items;
  std::vector<CountCheck> &cc = r.format_counts[f];
  for (const CountRequirement &c : counts) {
    CountCheck k{count_rel_name(c.rel), c.n, found, count_holds(c.rel, c.n, found), c.phrase, c.source};
    ev += "; requested " + k.relation + " " + std::to_string(c.n) + " ('" + c.phrase + "'), found " +
          std::to_string(found) + (k.passed ? "" : ": count not met");
    ok = ok && k.passed;
    cc.push_back(std::move(k));
  }
  return ok;
}

// 2. Format conformance F: the share of the expected formats the answer has.
void score_formats(std::string_view answer, const std::vector<Line> &lines, const FormatRequests &req,
                   const S0Params &p, S0Result &r) {
  int passed = 0;
  for (const std::string &f : r.expectations) {
    std::string ev;
    bool ok = false;
    const int fi = f == "LIST" ? kFmtList : f == "STEPS" ? kFmtSteps : -1;
    if (f == "JSON") ok = json_check(answer, lines, ev);
    else if (f == "LIST")
      ok = list_conforms(lines, req[static_cast<std::size_t>(kFmtList)], p, r, ev);
    else if (f == "STEPS")
      ok = steps_check(lines, ev, &r.format_items[f]);
    else if (f == "TABLE") ok = table_check(lines, ev);
    else if (f == "CODEBLOCK") ok = code_check(lines, ev);
    else if (f == "HEADINGS") {
      int n = count_kind(lines, LineKind::Heading);
      ok = n >= 1;
      ev = std::to_string(n) + " heading line(s)";
    }
    if (fi >= 0 && !req[static_cast<std::size_t>(fi)].counts.empty())
      ok = counts_hold(f, req[static_cast<std::size_t>(fi)].counts, r, ev) && ok;
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
}

// 3. Structure G_str: headings, list markers and paragraphs, with the short-answer guardrail.
void score_structure(std::string_view answer, const std::vector<Line> &lines, const std::vector<text::Paragraph> &paras,
                     const S0Params &p, S0Result &r) {
  r.n_headings = count_kind(lines, LineKind::Heading);
  r.n_bullets = count_kind(lines, LineKind::Bullet);
  r.n_numbered = count_kind(lines, LineKind::Numbered);
  r.n_paragraphs = static_cast<int>(paras.size());
  r.n_sentences = static_cast<int>(text::split_sentences(answer, lines).size());
  const int markers = r.n_headings + r.n_numbered + r.n_bullets;
  r.G_str = clip01((markers + std::min(r.n_paragraphs, 3)) / p.K);
  if (!text::trim(answer).empty() && r.n_sentences <= 1 && markers == 0 && r.G_str < p.short_answer_min) {
    r.G_str = p.short_answer_min;  // a one-sentence answer cannot show structure; do not push it towards 0
    r.short_answer_guardrail = true;
  }
}

// 4. Redundancy R_red: mean pairwise similarity of paragraphs (token Jaccard, or the embedding's cosine).
void score_redundancy(const std::vector<text::Paragraph> &paras, const S0Params &p, const EmbedFn &embed, S0Result &r) {
  if (paras.size() < 2) return;
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
      for (std::size_t j = i + 1; j < ptxt.size(); ++j)
        r.paragraph_similarities.push_back(clip01(cosine(e.row(i), e.row(j), e.dim)));
  }
  double s = 0;
  for (double v : r.paragraph_similarities) s += v;
  r.R_red = clip01(s / static_cast<double>(r.paragraph_similarities.size()));
}

}  // namespace

S0Result compute_s0(const S0Input &in, const S0Params &p, const EmbedFn &embed) {
  S0Result r;
  const FormatRequests req = expected_formats(in, p, r);
  const std::string_view answer = in.answer;
  const std::vector<Line> lines = text::classify_lines(answer);
  score_formats(answer, lines, req, p, r);
  const std::vector<text::Paragraph> paras = text::split_paragraphs(answer, lines);
  score_structure(answer, lines, paras, p, r);
  score_redundancy(paras, p, embed, r);

  // 5. S0, with alpha by the tool profile where the parameters give one.
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
