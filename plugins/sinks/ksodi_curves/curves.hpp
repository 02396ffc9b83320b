// ksodi.curves: collects the KSODI-Full values per conversation and renders them (Markdown + cairo PNGs).
// Memory is proportional to the number of turns (one small Point per record).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ksodi {

struct CurvesConfig {
  std::string group_field = "conversation_id", order_field = "turn";
  std::string s_node = "s_t", k_node = "k_t", o_node = "o_t";
  double event_min = 0.05;  // a Δ term at or above this value is an event
  int width = 900, height = 420;
};

struct CurveEvent {
  std::string kind;  // "built", "broken", "repaired"
  std::string what;  // e.g. "K fill +D (docs)"
};

struct CurvePoint {
  std::string turn;  // the order field's value as text
  double order = 0;  // numeric order (the order field if numeric, else arrival)
  std::optional<double> S, K, O;
  std::vector<CurveEvent> events;
};

class CurvesCollector {
 public:
  explicit CurvesCollector(CurvesConfig cfg) : cfg_(std::move(cfg)) {}
  void add(const nlohmann::json &record);
  // Writes <dir>/curves/<conversation>.png, <dir>/curves/overview.png and <dir>/<summary_file>; returns the
  // written paths relative to dir. Every file is written as .partial and renamed.
  std::vector<std::string> write(const std::string &dir, const std::string &summary_file) const;
  std::string markdown(const std::map<std::string, std::string> &png_names) const;
  const std::map<std::string, std::vector<CurvePoint>> &conversations() const { return conv_; }
  const std::vector<std::string> &order() const { return order_; }

 private:
  CurvesConfig cfg_;
  std::map<std::string, std::vector<CurvePoint>> conv_;
  std::vector<std::string> order_;
  std::map<std::string, std::vector<std::string>> lost_;  // K dimensions lost so far, per conversation
};

// Renders one conversation's S/K/O curves with event markers into a PNG file (exact path).
void render_conversation_png(const std::string &path, const std::string &title, const std::vector<CurvePoint> &pts, int w, int h);
// Three panels (S, K, O): every conversation as a thin line, the mean per turn position bold.
void render_overview_png(const std::string &path, const std::vector<const std::vector<CurvePoint> *> &convs, int w, int h);

}  // namespace ksodi
