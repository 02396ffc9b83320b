// summary.png: a grouped bar chart (cairo). Categories (criteria, then Score) along x; one bar per
// transformation in each group, its height the mean over replications, a whisker from min to max; a legend
// above the plot. Text uses cairo's toy API with "DejaVu Sans", which renders UTF-8 (umlauts) directly.
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "report.hpp"

namespace chatbot_report {

namespace {

struct Rgb {
  double r, g, b;
};
const Rgb kPalette[] = {{0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
                        {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50},
                        {0.74, 0.74, 0.13}, {0.09, 0.75, 0.81}};

double text_width(cairo_t *cr, const std::string &s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  return e.x_advance;
}

// Splits a label into lines no wider than `width` (at spaces; a single long word is cut with "…").
std::vector<std::string> wrap(cairo_t *cr, const std::string &text, double width, std::size_t max_lines) {
  std::vector<std::string> words, lines;
  std::string w;
  for (char ch : text) {
    if (ch == ' ') {
      if (!w.empty()) words.push_back(w);
      w.clear();
    } else {
      w += ch;
    }
  }
  if (!w.empty()) words.push_back(w);
  std::string cur;
  for (const auto &x : words) {
    std::string cand = cur.empty() ? x : cur + " " + x;
    if (text_width(cr, cand) <= width || cur.empty()) {
      cur = cand;
    } else {
      lines.push_back(cur);
      cur = x;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  if (lines.size() > max_lines) {
    lines.resize(max_lines);
    lines.back() += "…";
  }
  for (auto &l : lines) {
    while (text_width(cr, l) > width && l.size() > 4) {
      // drop one UTF-8 character before the ellipsis
      std::string base = l.size() >= 3 && l.compare(l.size() - 3, 3, "…") == 0 ? l.substr(0, l.size() - 3) : l;
      std::size_t cut = base.size() - 1;
      while (cut > 0 && (static_cast<unsigned char>(base[cut]) & 0xC0) == 0x80) --cut;
      l = base.substr(0, cut) + "…";
    }
  }
  return lines;
}

void text_at(cairo_t *cr, const std::string &s, double x, double y, double align) {
  cairo_move_to(cr, x - align * text_width(cr, s), y);
  cairo_show_text(cr, s.c_str());
}

}  // namespace

void write_chart_png(const std::filesystem::path &file, const std::string &title, const std::vector<std::string> &categories,
                     const std::vector<ChartSeries> &series, const std::string &footnote, int width, int height) {
  cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create(surf);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);

  // Title.
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_font_size(cr, 20);
  text_at(cr, title, width / 2.0, 32, 0.5);

  // Legend (wraps onto several rows).
  cairo_set_font_size(cr, 13);
  double lx = 70, ly = 56;
  for (std::size_t s = 0; s < series.size(); ++s) {
    double w = 18 + 6 + text_width(cr, series[s].label) + 24;
    if (lx + w > width - 20 && lx > 70) {
      lx = 70;
      ly += 22;
    }
    const Rgb &c = kPalette[s % std::size(kPalette)];
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_rectangle(cr, lx, ly - 12, 18, 14);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, series[s].label, lx + 24, ly, 0);
    lx += w;
  }

  // Plot area.
  const double left = 70, right = width - 30.0, top = ly + 24, bottom = height - 110.0;
  double ymax = 1.0;
  for (const auto &s : series)
    for (const auto &v : s.values)
      if (v) ymax = std::max(ymax, v->max);
  if (ymax > 1.0) {
    double mag = std::pow(10.0, std::floor(std::log10(ymax)));
    ymax = std::ceil(ymax / mag) * mag;
  }
  auto ypos = [&](double v) { return bottom - (std::max(0.0, v) / ymax) * (bottom - top); };
  cairo_set_line_width(cr, 1);
  cairo_set_font_size(cr, 12);
  for (int i = 0; i <= 5; ++i) {
    double v = ymax * i / 5.0, y = ypos(v);
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, left, y);
    cairo_line_to(cr, right, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    char b[32];
    std::snprintf(b, sizeof b, ymax <= 1.0 ? "%.1f" : "%g", v);
    text_at(cr, b, left - 8, y + 4, 1.0);
  }
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_move_to(cr, left, top);
  cairo_line_to(cr, left, bottom);
  cairo_line_to(cr, right, bottom);
  cairo_stroke(cr);

  const std::size_t C = categories.size(), S = std::max<std::size_t>(1, series.size());
  const double group = C > 0 ? (right - left) / static_cast<double>(C) : (right - left);
  const double bar = group * 0.8 / static_cast<double>(S);
  for (std::size_t k = 0; k < C; ++k) {
    double gx = left + group * static_cast<double>(k) + group * 0.1;
    for (std::size_t s = 0; s < series.size(); ++s) {
      if (k >= series[s].values.size() || !series[s].values[k]) continue;
      const RepStats &st = *series[s].values[k];
      const Rgb &c = kPalette[s % std::size(kPalette)];
      double x = gx + bar * static_cast<double>(s);
      cairo_set_source_rgb(cr, c.r, c.g, c.b);
      cairo_rectangle(cr, x + 1, ypos(st.mean), bar - 2, bottom - ypos(st.mean));
      cairo_fill(cr);
      // whisker min..max
      double cx = x + bar / 2, cap = std::min(8.0, bar / 4);
      cairo_set_source_rgb(cr, 0, 0, 0);
      cairo_set_line_width(cr, 1.5);
      cairo_move_to(cr, cx, ypos(st.min));
      cairo_line_to(cr, cx, ypos(st.max));
      cairo_move_to(cr, cx - cap, ypos(st.min));
      cairo_line_to(cr, cx + cap, ypos(st.min));
      cairo_move_to(cr, cx - cap, ypos(st.max));
      cairo_line_to(cr, cx + cap, ypos(st.max));
      cairo_stroke(cr);
    }
    // category label, wrapped under the group
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_font_size(cr, 13);
    auto lines = wrap(cr, categories[k], group - 8, 3);
    for (std::size_t i = 0; i < lines.size(); ++i)
      text_at(cr, lines[i], left + group * (static_cast<double>(k) + 0.5), bottom + 20 + 16.0 * static_cast<double>(i), 0.5);
  }
  cairo_set_font_size(cr, 11);
  cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
  text_at(cr, footnote, left, height - 16.0, 0);

  cairo_destroy(cr);
  cairo_surface_flush(surf);
  std::string partial = file.string() + ".partial";
  cairo_status_t st = cairo_surface_write_to_png(surf, partial.c_str());
  cairo_surface_destroy(surf);
  if (st != CAIRO_STATUS_SUCCESS) throw std::runtime_error("cannot write " + partial + ": " + cairo_status_to_string(st));
  std::filesystem::rename(partial, file);
}

}  // namespace chatbot_report
