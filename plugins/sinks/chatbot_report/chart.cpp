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

namespace {

// The legend's swatches and labels, wrapping onto several rows; returns the baseline of its last row.
double draw_legend(cairo_t *cr, const std::vector<ChartSeries> &series, int width) {
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
  return ly;
}

// The plot area and how values map into it.
struct PlotArea {
  double left, right, top, bottom, ymax;
  double y(double v) const { return bottom - (std::max(0.0, v) / ymax) * (bottom - top); }
};

// The y axis' top: 1, or the largest maximum rounded up to its first digit.
double axis_max(const std::vector<ChartSeries> &series) {
  double ymax = 1.0;
  for (const auto &s : series)
    for (const auto &v : s.values)
      if (v) ymax = std::max(ymax, v->max);
  if (ymax > 1.0) {
    double mag = std::pow(10.0, std::floor(std::log10(ymax)));
    ymax = std::ceil(ymax / mag) * mag;
  }
  return ymax;
}

// Grid lines with their values, and the axes.
void draw_axes(cairo_t *cr, const PlotArea &a) {
  cairo_set_line_width(cr, 1);
  cairo_set_font_size(cr, 12);
  for (int i = 0; i <= 5; ++i) {
    double v = a.ymax * i / 5.0, y = a.y(v);
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, a.left, y);
    cairo_line_to(cr, a.right, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    char b[32];
    std::snprintf(b, sizeof b, a.ymax <= 1.0 ? "%.1f" : "%g", v);
    text_at(cr, b, a.left - 8, y + 4, 1.0);
  }
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_move_to(cr, a.left, a.top);
  cairo_line_to(cr, a.left, a.bottom);
  cairo_line_to(cr, a.right, a.bottom);
  cairo_stroke(cr);
}

// One bar: the mean, with a whisker from min to max.
void draw_bar(cairo_t *cr, const PlotArea &a, const RepStats &st, const Rgb &c, double x, double bar) {
  cairo_set_source_rgb(cr, c.r, c.g, c.b);
  cairo_rectangle(cr, x + 1, a.y(st.mean), bar - 2, a.bottom - a.y(st.mean));
  cairo_fill(cr);
  double cx = x + bar / 2, cap = std::min(8.0, bar / 4);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_line_width(cr, 1.5);
  cairo_move_to(cr, cx, a.y(st.min));
  cairo_line_to(cr, cx, a.y(st.max));
  cairo_move_to(cr, cx - cap, a.y(st.min));
  cairo_line_to(cr, cx + cap, a.y(st.min));
  cairo_move_to(cr, cx - cap, a.y(st.max));
  cairo_line_to(cr, cx + cap, a.y(st.max));
  cairo_stroke(cr);
}

// A group of bars per category, one per series, with the category's label wrapped under it.
void draw_groups(cairo_t *cr, const PlotArea &a, const std::vector<std::string> &categories,
                 const std::vector<ChartSeries> &series) {
  const std::size_t C = categories.size(), S = std::max<std::size_t>(1, series.size());
  const double group = C > 0 ? (a.right - a.left) / static_cast<double>(C) : (a.right - a.left);
  const double bar = group * 0.8 / static_cast<double>(S);
  for (std::size_t k = 0; k < C; ++k) {
    double gx = a.left + group * static_cast<double>(k) + group * 0.1;
    for (std::size_t s = 0; s < series.size(); ++s) {
      if (k >= series[s].values.size() || !series[s].values[k]) continue;
      draw_bar(cr, a, *series[s].values[k], kPalette[s % std::size(kPalette)], gx + bar * static_cast<double>(s), bar);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_font_size(cr, 13);
    auto lines = wrap(cr, categories[k], group - 8, 3);
    for (std::size_t i = 0; i < lines.size(); ++i)
      text_at(cr, lines[i], a.left + group * (static_cast<double>(k) + 0.5),
              a.bottom + 20 + 16.0 * static_cast<double>(i), 0.5);
  }
}

}  // namespace

void write_chart_png(const std::filesystem::path &file, const std::string &title,
                     const std::vector<std::string> &categories, const std::vector<ChartSeries> &series,
                     const std::string &footnote, int width, int height) {
  cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create(surf);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);

  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_font_size(cr, 20);
  text_at(cr, title, width / 2.0, 32, 0.5);
  const double ly = draw_legend(cr, series, width);
  const PlotArea area{70, width - 30.0, ly + 24, height - 110.0, axis_max(series)};
  draw_axes(cr, area);
  draw_groups(cr, area, categories, series);
  cairo_set_font_size(cr, 11);
  cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
  text_at(cr, footnote, area.left, height - 16.0, 0);

  cairo_destroy(cr);
  cairo_surface_flush(surf);
  std::string partial = file.string() + ".partial";
  cairo_status_t st = cairo_surface_write_to_png(surf, partial.c_str());
  cairo_surface_destroy(surf);
  if (st != CAIRO_STATUS_SUCCESS) throw std::runtime_error("cannot write " + partial + ": " + cairo_status_to_string(st));
  std::filesystem::rename(partial, file);
}

}  // namespace chatbot_report
