#include "curves.hpp"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "evalgraph/output_file.hpp"

namespace ksodi {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::optional<double> num_at(const json &rec, const std::string &node, const char *field) {
  auto n = rec.find(node);
  if (n == rec.end() || !n->is_object()) return std::nullopt;
  auto f = n->find(field);
  if (f == n->end() || !f->is_number()) return std::nullopt;
  return f->get<double>();
}

const json *trigger(const json &rec, const std::string &node, const char *term) {
  auto n = rec.find(node);
  if (n == rec.end() || !n->is_object()) return nullptr;
  auto t = n->find("terms");
  if (t == n->end() || !t->contains(term)) return nullptr;
  const json &tr = (*t)[term];
  return tr.contains("trigger") ? &tr["trigger"] : nullptr;
}

std::string join(const json &arr) {
  std::string s;
  if (!arr.is_array()) return s;
  for (const auto &v : arr) s += (s.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

std::string fmt2(std::optional<double> v) {
  if (!v) return "–";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", *v);
  return b;
}

std::string safe_name(const std::string &s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  if (o.empty() || o[0] == '.') o = "c" + o;
  return o.substr(0, 80);
}

struct Plot {
  double x0, y0, w, h;  // plot area in device units
  int n;                // points on the x axis
  double px(int i) const { return n <= 1 ? x0 + w / 2 : x0 + w * i / (n - 1); }
  double py(double v) const { return y0 + h * (1.0 - std::clamp(v, 0.0, 1.0)); }
};

void axes(cairo_t *cr, const Plot &p, const std::vector<std::string> &labels) {
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_set_line_width(cr, 1);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 11);
  for (int k = 0; k <= 4; ++k) {
    double v = k / 4.0, y = p.py(v);
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, p.x0, y);
    cairo_line_to(cr, p.x0 + p.w, y);
    cairo_stroke(cr);
    char b[16];
    std::snprintf(b, sizeof b, "%.2f", v);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_move_to(cr, p.x0 - 34, y + 4);
    cairo_show_text(cr, b);
  }
  std::size_t step = std::max<std::size_t>(1, labels.size() / 20);
  for (std::size_t i = 0; i < labels.size(); i += step) {
    cairo_move_to(cr, p.px(static_cast<int>(i)) - 4, p.y0 + p.h + 16);
    cairo_show_text(cr, labels[i].c_str());
  }
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  cairo_rectangle(cr, p.x0, p.y0, p.w, p.h);
  cairo_stroke(cr);
}

void line(cairo_t *cr, const Plot &p, const std::vector<std::optional<double>> &v, double r, double g, double b, double width,
          bool dots) {
  cairo_set_source_rgb(cr, r, g, b);
  cairo_set_line_width(cr, width);
  bool open = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i]) {
      if (open) cairo_stroke(cr);
      open = false;
      continue;
    }
    if (!open) cairo_move_to(cr, p.px(static_cast<int>(i)), p.py(*v[i]));
    else cairo_line_to(cr, p.px(static_cast<int>(i)), p.py(*v[i]));
    open = true;
  }
  if (open) cairo_stroke(cr);
  if (dots)
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i]) {
        cairo_arc(cr, p.px(static_cast<int>(i)), p.py(*v[i]), 3, 0, 2 * M_PI);
        cairo_fill(cr);
      }
}

void finish_png(cairo_surface_t *s, const std::string &path) {
  const std::string partial = evalgraph::partial_path(path).string();
  cairo_status_t st = cairo_surface_write_to_png(s, partial.c_str());
  cairo_surface_destroy(s);
  if (st != CAIRO_STATUS_SUCCESS) throw std::runtime_error("ksodi.curves: cannot write " + partial + ": " + cairo_status_to_string(st));
  evalgraph::publish_partial_file(path, "ksodi.curves");
}

constexpr double kColors[3][3] = {{0.12, 0.47, 0.71}, {0.17, 0.63, 0.17}, {0.85, 0.37, 0.01}};  // S K O

}  // namespace

void CurvesCollector::add(const json &rec) {
  std::string key;
  auto g = rec.find(cfg_.group_field);
  key = g == rec.end() || g->is_null() ? "(none)" : (g->is_string() ? g->get<std::string>() : g->dump());
  auto [it, fresh] = conv_.try_emplace(key);
  if (fresh) order_.push_back(key);
  CurvePoint p;
  auto o = rec.find(cfg_.order_field);
  p.turn = o == rec.end() || o->is_null() ? std::to_string(it->second.size() + 1) : (o->is_string() ? o->get<std::string>() : o->dump());
  p.order = o != rec.end() && o->is_number() ? o->get<double>() : static_cast<double>(it->second.size() + 1);
  p.S = num_at(rec, cfg_.s_node, "S");
  p.K = num_at(rec, cfg_.k_node, "K");
  p.O = num_at(rec, cfg_.o_node, "O");
  const double m = cfg_.event_min;
  auto val = [&](const std::string &node, const char *f) { return num_at(rec, node, f).value_or(0.0); };
  char buf[160];
  auto &lost = lost_[key];
  if (val(cfg_.k_node, "fill") >= m) {
    const json *t = trigger(rec, cfg_.k_node, "fill");
    json gained = t ? t->value("dimensions_gained", json::array()) : json::array();
    bool regained = false;  // a dimension lost earlier in this conversation came back: a repair
    for (const auto &d : gained)
      if (d.is_string() && std::find(lost.begin(), lost.end(), d.get<std::string>()) != lost.end()) regained = true;
    p.events.push_back({regained ? "repaired" : "built", "K gaps closed: +" + join(gained)});
  }
  if (val(cfg_.k_node, "decay") >= m) {
    const json *t = trigger(rec, cfg_.k_node, "decay");
    json dims = t ? t->value("dimensions_lost", json::array()) : json::array();
    for (const auto &d : dims)
      if (d.is_string()) lost.push_back(d.get<std::string>());
    p.events.push_back({"broken", "K context lost: -" + join(dims)});
  }
  if (val(cfg_.k_node, "shift") >= m) {
    const json *t = trigger(rec, cfg_.k_node, "shift");
    std::snprintf(buf, sizeof buf, "K topic shift (max similarity %.3f)", t ? t->value("max_similarity", 0.0) : 0.0);
    p.events.push_back({"broken", buf});
  }
  if (val(cfg_.s_node, "repair") >= m) {
    const json *t = trigger(rec, cfg_.s_node, "repair");
    p.events.push_back({"repaired", "S structure repaired after '" + (t && t->contains("cue") && (*t)["cue"].is_string() ? (*t)["cue"].get<std::string>() : std::string("?")) + "'"});
  }
  if (val(cfg_.s_node, "decay") >= m) p.events.push_back({"broken", "S structure decayed"});
  if (val(cfg_.o_node, "R_corr") >= m) p.events.push_back({"repaired", "O corrected after counter-evidence"});
  if (val(cfg_.o_node, "drift") >= m) p.events.push_back({"broken", "O drift (alignment fell)"});
  if (const json *t = trigger(rec, cfg_.o_node, "C_turn"); t && t->value("conflict", 0) > 0) {
    std::snprintf(buf, sizeof buf, "O inconsistent: %d quantit%s changed without counter-evidence", t->value("conflict", 0),
                  t->value("conflict", 0) == 1 ? "y" : "ies");
    p.events.push_back({"broken", buf});
  }
  if (const json *t = trigger(rec, cfg_.o_node, "R_corr"); t && t->value("mode", json()).is_string() && val(cfg_.o_node, "R_corr") < m)
    p.events.push_back({"broken", "O counter-evidence not taken up"});
  it->second.push_back(std::move(p));
}

std::string CurvesCollector::markdown(const std::map<std::string, std::string> &png) const {
  std::ostringstream md;
  md << "# KSODI-Full curves\n\n"
     << "S(t) structure, K(t) context coherence, O(t) objectivity per turn (" << order_.size() << " conversations). "
     << "Events: a Δ term ≥ " << cfg_.event_min << ". **Built up** = context gaps closed; **broken** = context lost, "
     << "topic shift, structure decay, drift, inconsistent quantities, ignored counter-evidence; **repaired** = structure "
     << "improved after a complaint, a gap closed after a break, a claim corrected after counter-evidence. "
     << "Compare only within controlled setups (same rules, same task classes).\n\n"
     << "![overview](curves/overview.png)\n\n"
     << "| conversation | turns | mean S | mean K | mean O | built up (turns) | broken (turns) | repaired (turns) |\n"
     << "|---|---|---|---|---|---|---|---|\n";
  auto turns_of = [](const std::vector<CurvePoint> &pts, const char *kind) {
    std::string s;
    std::set<std::string> seen;
    for (const auto &p : pts)
      for (const auto &e : p.events)
        if (e.kind == kind && seen.insert(p.turn).second) s += (s.empty() ? "" : ", ") + p.turn;
    return s.empty() ? std::string("–") : s;
  };
  auto mean = [](const std::vector<CurvePoint> &pts, std::optional<double> CurvePoint::*f) {
    double s = 0;
    int n = 0;
    for (const auto &p : pts)
      if (p.*f) {
        s += *(p.*f);
        ++n;
      }
    return n == 0 ? std::optional<double>() : std::optional<double>(s / n);
  };
  for (const auto &c : order_) {
    const auto &pts = conv_.at(c);
    md << "| " << c << " | " << pts.size() << " | " << fmt2(mean(pts, &CurvePoint::S)) << " | " << fmt2(mean(pts, &CurvePoint::K))
       << " | " << fmt2(mean(pts, &CurvePoint::O)) << " | " << turns_of(pts, "built") << " | " << turns_of(pts, "broken") << " | "
       << turns_of(pts, "repaired") << " |\n";
  }
  for (const auto &c : order_) {
    const auto &pts = conv_.at(c);
    md << "\n## " << c << "\n\n";
    if (auto it = png.find(c); it != png.end()) md << "![" << c << "](curves/" << it->second << ")\n\n";
    md << "- Context built up at turn(s): " << turns_of(pts, "built") << "\n"
       << "- Broken at turn(s): " << turns_of(pts, "broken") << "\n"
       << "- Repaired at turn(s): " << turns_of(pts, "repaired") << "\n\n"
       << "| turn | S | K | O | events |\n|---|---|---|---|---|\n";
    for (const auto &p : pts) {
      std::string ev;
      for (const auto &e : p.events) ev += (ev.empty() ? "" : "; ") + e.kind + ": " + e.what;
      md << "| " << p.turn << " | " << fmt2(p.S) << " | " << fmt2(p.K) << " | " << fmt2(p.O) << " | " << (ev.empty() ? "–" : ev) << " |\n";
    }
  }
  return md.str();
}

std::vector<std::string> CurvesCollector::write(const std::string &dir, const std::string &summary_file) const {
  fs::path curves = fs::path(dir) / "curves";
  fs::create_directories(curves);
  std::vector<std::string> files;
  std::map<std::string, std::string> names;
  std::set<std::string> used;
  std::vector<const std::vector<CurvePoint> *> all;
  for (const auto &c : order_) {
    std::string base = safe_name(c), name = base + ".png";
    for (int k = 2; used.count(name) != 0 || name == "overview.png"; ++k) name = base + "_" + std::to_string(k) + ".png";
    used.insert(name);
    names[c] = name;
    std::vector<CurvePoint> pts = conv_.at(c);
    std::stable_sort(pts.begin(), pts.end(), [](const CurvePoint &a, const CurvePoint &b) { return a.order < b.order; });
    render_conversation_png((curves / name).string(), c, pts, cfg_.width, cfg_.height);
    files.push_back("curves/" + name);
    all.push_back(&conv_.at(c));
  }
  render_overview_png((curves / "overview.png").string(), all, cfg_.width + 300, cfg_.height);
  files.push_back("curves/overview.png");
  evalgraph::write_file_whole(fs::path(dir) / summary_file, markdown(names), "ksodi.curves");
  files.push_back(summary_file);
  return files;
}

void render_conversation_png(const std::string &path, const std::string &title, const std::vector<CurvePoint> &pts, int w, int h) {
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  cairo_t *cr = cairo_create(s);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  Plot p{60, 40, static_cast<double>(w) - 200, static_cast<double>(h) - 80, static_cast<int>(pts.size())};
  std::vector<std::string> labels;
  for (const auto &q : pts) labels.push_back(q.turn);
  axes(cr, p, labels);
  // event bands: red = broken, green = repaired, blue = built up
  for (std::size_t i = 0; i < pts.size(); ++i) {
    int row = 0;
    for (const char *kind : {"broken", "repaired", "built"}) {
      bool has = std::any_of(pts[i].events.begin(), pts[i].events.end(), [&](const CurveEvent &e) { return e.kind == kind; });
      if (has) {
        double x = p.px(static_cast<int>(i)), y = p.y0 - 8;
        if (std::string(kind) == "broken") cairo_set_source_rgba(cr, 0.85, 0.1, 0.1, 0.9);
        else if (std::string(kind) == "repaired") cairo_set_source_rgba(cr, 0.1, 0.6, 0.1, 0.9);
        else cairo_set_source_rgba(cr, 0.1, 0.3, 0.8, 0.9);
        double dx = (row - 1) * 9.0;
        cairo_move_to(cr, x + dx - 4, y - 6);
        cairo_line_to(cr, x + dx + 4, y - 6);
        cairo_line_to(cr, x + dx, y + 2);
        cairo_close_path(cr);
        cairo_fill(cr);
        cairo_set_source_rgba(cr, 0.6, 0.6, 0.6, 0.5);
        cairo_set_line_width(cr, 0.8);
        cairo_move_to(cr, x, p.y0);
        cairo_line_to(cr, x, p.y0 + p.h);
        cairo_stroke(cr);
      }
      ++row;
    }
  }
  const char *names[3] = {"S(t)", "K(t)", "O(t)"};
  for (int k = 0; k < 3; ++k) {
    std::vector<std::optional<double>> v;
    for (const auto &q : pts) v.push_back(k == 0 ? q.S : (k == 1 ? q.K : q.O));
    line(cr, p, v, kColors[k][0], kColors[k][1], kColors[k][2], 2.2, true);
  }
  // legend
  cairo_set_font_size(cr, 12);
  double lx = p.x0 + p.w + 20, ly = p.y0 + 10;
  for (int k = 0; k < 3; ++k) {
    cairo_set_source_rgb(cr, kColors[k][0], kColors[k][1], kColors[k][2]);
    cairo_rectangle(cr, lx, ly + k * 20 - 8, 18, 4);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_move_to(cr, lx + 24, ly + k * 20 - 2);
    cairo_show_text(cr, names[k]);
  }
  const char *ev[3] = {"broken", "repaired", "built up"};
  const double evc[3][3] = {{0.85, 0.1, 0.1}, {0.1, 0.6, 0.1}, {0.1, 0.3, 0.8}};
  for (int k = 0; k < 3; ++k) {
    double y = ly + 80 + k * 20;
    cairo_set_source_rgb(cr, evc[k][0], evc[k][1], evc[k][2]);
    cairo_move_to(cr, lx + 5, y - 8);
    cairo_line_to(cr, lx + 13, y - 8);
    cairo_line_to(cr, lx + 9, y);
    cairo_close_path(cr);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_move_to(cr, lx + 24, y - 2);
    cairo_show_text(cr, ev[k]);
  }
  cairo_set_font_size(cr, 14);
  cairo_move_to(cr, p.x0, 20);
  cairo_show_text(cr, ("KSODI-Full: " + title).c_str());
  cairo_set_font_size(cr, 11);
  cairo_move_to(cr, p.x0 + p.w / 2 - 10, static_cast<double>(h) - 8);
  cairo_show_text(cr, "turn");
  cairo_destroy(cr);
  finish_png(s, path);
}

void render_overview_png(const std::string &path, const std::vector<const std::vector<CurvePoint> *> &convs, int w, int h) {
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  cairo_t *cr = cairo_create(s);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  std::size_t n = 0;
  for (const auto *c : convs) n = std::max(n, c->size());
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < n; ++i) labels.push_back(std::to_string(i + 1));
  const char *names[3] = {"S(t)", "K(t)", "O(t)"};
  double pw = (static_cast<double>(w) - 60) / 3.0;
  for (int k = 0; k < 3; ++k) {
    Plot p{50 + k * pw, 40, pw - 50, static_cast<double>(h) - 80, static_cast<int>(n)};
    axes(cr, p, labels);
    std::vector<double> sum(n, 0);
    std::vector<int> cnt(n, 0);
    for (const auto *c : convs) {
      std::vector<std::optional<double>> v;
      for (std::size_t i = 0; i < c->size(); ++i) {
        const CurvePoint &q = (*c)[i];
        auto x = k == 0 ? q.S : (k == 1 ? q.K : q.O);
        v.push_back(x);
        if (x) {
          sum[i] += *x;
          ++cnt[i];
        }
      }
      line(cr, p, v, 0.55 + 0.4 * kColors[k][0], 0.55 + 0.4 * kColors[k][1], 0.55 + 0.4 * kColors[k][2], 1.0, false);
    }
    std::vector<std::optional<double>> mean;
    for (std::size_t i = 0; i < n; ++i) mean.push_back(cnt[i] > 0 ? std::optional<double>(sum[i] / cnt[i]) : std::nullopt);
    line(cr, p, mean, kColors[k][0], kColors[k][1], kColors[k][2], 3.0, true);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_set_font_size(cr, 13);
    cairo_move_to(cr, p.x0, 24);
    cairo_show_text(cr, (std::string(names[k]) + ": thin = conversations, bold = mean").c_str());
  }
  cairo_destroy(cr);
  finish_png(s, path);
}

}  // namespace ksodi
