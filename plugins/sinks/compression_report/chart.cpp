#include "chart.hpp"

#include <cairo.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "compression/rubric.hpp"

namespace compression {

namespace {
struct Rgb {
  double r, g, b;
};
const Rgb kPalette[] = {{0.20, 0.40, 0.70}, {0.90, 0.50, 0.10}, {0.30, 0.60, 0.30}, {0.75, 0.25, 0.30},
                        {0.55, 0.40, 0.70}, {0.50, 0.35, 0.25}, {0.85, 0.45, 0.70}, {0.45, 0.45, 0.45}};
const char *kGroupTitles[] = {"Overall", "Accuracy", "Context", "Artifact", "Completeness", "Continuity", "Instruction"};
}  // namespace

void write_chart(const json &result, const std::string &title, const std::string &png_path) {
  const json &methods = result.at("methods");
  const int W = 1100, H = 560, left = 60, right = 20, top = 60, bottom = 110;
  cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
  cairo_t *cr = cairo_create(surf);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 18);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_move_to(cr, left, 32);
  cairo_show_text(cr, title.c_str());
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  const double ph = H - top - bottom, pw = W - left - right;
  auto ypos = [&](double v) { return top + ph * (1.0 - v / 5.0); };
  // Grid and y axis.
  cairo_set_font_size(cr, 12);
  for (int v = 0; v <= 5; ++v) {
    cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
    cairo_set_line_width(cr, 1);
    cairo_move_to(cr, left, ypos(v));
    cairo_line_to(cr, W - right, ypos(v));
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_move_to(cr, left - 18, ypos(v) + 4);
    cairo_show_text(cr, std::to_string(v).c_str());
  }
  const std::size_t groups = 1 + dimensions().size();
  const std::size_t nm = methods.size();
  const double gw = pw / static_cast<double>(groups);
  const double bw = nm == 0 ? 0 : (gw * 0.8) / static_cast<double>(nm);
  for (std::size_t g = 0; g < groups; ++g) {
    double gx = left + gw * static_cast<double>(g) + gw * 0.1;
    for (std::size_t m = 0; m < nm; ++m) {
      const json &v = g == 0 ? methods[m]["overall"] : methods[m]["dimensions"][dimensions()[g - 1]];
      if (!v.is_number()) continue;
      double val = v.get<double>();
      const Rgb &c = kPalette[m % 8];
      cairo_set_source_rgb(cr, c.r, c.g, c.b);
      double x = gx + bw * static_cast<double>(m);
      cairo_rectangle(cr, x, ypos(val), bw * 0.92, ypos(0) - ypos(val));
      cairo_fill(cr);
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.2f", val);
      cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
      cairo_set_font_size(cr, 10);
      cairo_text_extents_t ext;
      cairo_text_extents(cr, buf, &ext);
      cairo_move_to(cr, x + bw * 0.46 - ext.width / 2, ypos(val) - 4);
      cairo_show_text(cr, buf);
    }
    cairo_set_font_size(cr, 13);
    cairo_text_extents_t ext;
    cairo_text_extents(cr, kGroupTitles[g], &ext);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, left + gw * (static_cast<double>(g) + 0.5) - ext.width / 2, ypos(0) + 20);
    cairo_show_text(cr, kGroupTitles[g]);
  }
  // Legend.
  double lx = left;
  cairo_set_font_size(cr, 13);
  for (std::size_t m = 0; m < nm; ++m) {
    const Rgb &c = kPalette[m % 8];
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_rectangle(cr, lx, H - 50, 14, 14);
    cairo_fill(cr);
    std::string label = methods[m].value("label", methods[m].value("method", ""));
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, lx + 20, H - 38);
    cairo_show_text(cr, label.c_str());
    cairo_text_extents_t ext;
    cairo_text_extents(cr, label.c_str(), &ext);
    lx += 40 + ext.x_advance;
  }
  cairo_destroy(cr);
  cairo_surface_flush(surf);
  cairo_status_t st = cairo_surface_write_to_png(surf, png_path.c_str());
  cairo_surface_destroy(surf);
  if (st != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error("cannot write " + png_path + ": " + cairo_status_to_string(st));
}

}  // namespace compression
