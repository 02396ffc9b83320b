#include "report.hpp"

#include <xlsxwriter.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "evalgraph/output_file.hpp"

namespace chatbot_report {
namespace fs = std::filesystem;

namespace {

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6f", v);
  std::string s = b;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}
std::string num2(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

// A CSV file written as <name>.partial and renamed by close().
class CsvOut {
 public:
  CsvOut(fs::path file, char sep) : file_(std::move(file)), sep_(sep) {
    f_ = std::fopen((file_.string() + ".partial").c_str(), "wb");
    if (f_ == nullptr) throw std::runtime_error("cannot write " + file_.string() + ".partial");
  }
  ~CsvOut() {
    if (f_ != nullptr) std::fclose(f_);
  }
  void row(const std::vector<std::string> &cells) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) line += sep_;
      const std::string &c = cells[i];
      if (c.find_first_of(std::string("\"\r\n") + sep_) != std::string::npos) {
        line += '"';
        for (char ch : c) {
          if (ch == '"') line += '"';
          line += ch;
        }
        line += '"';
      } else {
        line += c;
      }
    }
    line += '\n';
    if (std::fwrite(line.data(), 1, line.size(), f_) != line.size()) throw std::runtime_error("write failed: " + file_.string());
  }
  void close() {
    if (f_ == nullptr) return;
    bool ok = std::fclose(f_) == 0;
    f_ = nullptr;
    if (!ok) throw std::runtime_error("write failed: " + file_.string());
    fs::rename(file_.string() + ".partial", file_);
  }

 private:
  fs::path file_;
  char sep_;
  std::FILE *f_ = nullptr;
};

// A cell of a table written to both CSV and XLSX: text, number or empty.
struct Cell {
  enum Kind { empty, text, number } kind = empty;
  std::string s;
  double d = 0;
  static Cell t(std::string v) { return {text, std::move(v), 0}; }
  static Cell n(double v) { return {number, {}, v}; }
  static Cell opt(const std::optional<double> &v) { return v ? n(*v) : Cell{}; }
  std::string csv() const { return kind == text ? s : kind == number ? num(d) : std::string(); }
};

// An .xlsx file written as <name>.partial and renamed by close().
class XlsxOut {
 public:
  XlsxOut(fs::path file, const std::string &sheet, bool constant_memory) : file_(std::move(file)) {
    lxw_workbook_options o{};
    o.constant_memory = constant_memory ? LXW_TRUE : LXW_FALSE;
    std::string tmp = file_.parent_path().string();
    o.tmpdir = tmp.empty() ? nullptr : const_cast<char *>(tmp.c_str());
    std::string partial = file_.string() + ".partial";
    wb_ = workbook_new_opt(partial.c_str(), &o);
    if (wb_ == nullptr) throw std::runtime_error("cannot create " + partial);
    ws_ = workbook_add_worksheet(wb_, sheet.c_str());
    bold_ = workbook_add_format(wb_);
    format_set_bold(bold_);
  }
  ~XlsxOut() {
    if (wb_ != nullptr) workbook_close(wb_);
  }
  void row(const std::vector<Cell> &cells, bool header = false) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const Cell &x = cells[c];
      auto col = static_cast<lxw_col_t>(c);
      if (x.kind == Cell::text) {
        std::string v = x.s.size() > 32767 ? x.s.substr(0, 32767) : x.s;
        worksheet_write_string(ws_, row_, col, v.c_str(), header ? bold_ : nullptr);
      } else if (x.kind == Cell::number && std::isfinite(x.d)) {
        worksheet_write_number(ws_, row_, col, x.d, nullptr);
      }
    }
    ++row_;
  }
  void close() {
    if (wb_ == nullptr) return;
    lxw_error e = workbook_close(wb_);
    wb_ = nullptr;
    if (e != LXW_NO_ERROR) throw std::runtime_error("cannot write " + file_.string() + ": " + lxw_strerror(e));
    fs::rename(file_.string() + ".partial", file_);
  }

 private:
  fs::path file_;
  lxw_workbook *wb_ = nullptr;
  lxw_worksheet *ws_ = nullptr;
  lxw_format *bold_ = nullptr;
  lxw_row_t row_ = 0;
};

std::vector<std::string> csv_cells(const std::vector<Cell> &cells) {
  std::vector<std::string> r;
  for (const auto &c : cells) r.push_back(c.csv());
  return r;
}
std::vector<Cell> text_cells(const std::vector<std::string> &v) {
  std::vector<Cell> r;
  for (const auto &s : v) r.push_back(Cell::t(s));
  return r;
}

const json *lookup(const json &rec, const std::string &field) {
  if (field.empty()) return nullptr;
  if (auto it = rec.find(field); it != rec.end()) return &*it;
  auto dot = field.find('.');
  if (dot == std::string::npos) return nullptr;
  auto it = rec.find(field.substr(0, dot));
  if (it == rec.end() || !it->is_object()) return nullptr;
  auto j = it->find(field.substr(dot + 1));
  return j == it->end() ? nullptr : &*j;
}

std::string as_text(const json *v) {
  if (v == nullptr || v->is_null()) return "";
  return v->is_string() ? v->get<std::string>() : v->dump();
}

void write_text_file(const fs::path &file, const std::string &text) {
  evalgraph::write_file_whole(file, text, "chatbot.report");
}

}  // namespace

RepStats rep_stats(const std::vector<double> &m) {
  RepStats s;
  s.n = m.size();
  if (m.empty()) return s;
  double sum = 0;
  s.min = s.max = m[0];
  for (double v : m) {
    sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.mean = sum / static_cast<double>(s.n);
  if (s.n >= 2) {
    double ss = 0;
    for (double v : m) ss += (v - s.mean) * (v - s.mean);
    double sd = std::sqrt(ss / static_cast<double>(s.n - 1));
    boost::math::students_t dist(static_cast<double>(s.n - 1));
    double t = boost::math::quantile(boost::math::complement(dist, 0.025));
    double half = t * sd / std::sqrt(static_cast<double>(s.n));
    s.sd = sd;
    s.ci_low = s.mean - half;
    s.ci_high = s.mean + half;
  }
  return s;
}

struct Report::Impl {
  ReportConfig cfg;
  std::unique_ptr<CsvOut> csv;
  std::unique_ptr<XlsxOut> xlsx;
  std::FILE *jsonl = nullptr;
  std::vector<std::string> header;

  struct Agg {
    std::map<int, std::pair<double, std::size_t>> reps;  // replication -> (sum, count)
    std::size_t invalid = 0, missing = 0, values = 0;
  };
  struct TAgg {
    std::size_t rows = 0, failed = 0;
    std::vector<Agg> crit;  // criteria, then Score
  };
  std::vector<TransformationSpec> transformations;
  std::map<std::string, std::size_t> t_index;
  std::vector<TAgg> agg;

  std::size_t ncrit() const { return cfg.criteria.size() + (cfg.has_score ? 1 : 0); }

  std::size_t transformation(const std::string &id, const std::string &label) {
    if (auto it = t_index.find(id); it != t_index.end()) return it->second;
    transformations.push_back({id, label.empty() ? id : label});
    t_index[id] = transformations.size() - 1;
    agg.push_back({0, 0, std::vector<Agg>(ncrit())});
    return transformations.size() - 1;
  }

  // The statistics of the finished run: per transformation and criterion (then Score), the replication means'.
  struct Summary {
    std::vector<std::string> displays;                        // the criteria's display names, then "Score"
    std::vector<std::vector<std::optional<RepStats>>> stats;  // [transformation][criterion]; empty: no value
    std::size_t total_invalid = 0;
  };
  Summary summarise() const;
  void write_report_json(std::vector<std::string> &files) const;
  void write_summary_tables(const Summary &s, std::vector<std::string> &files) const;
  void write_replication_statistics(const Summary &s, std::vector<std::string> &files) const;
  void write_summary_md(const Summary &s, std::vector<std::string> &files) const;
  void write_summary_png(const Summary &s, std::vector<std::string> &files) const;
};

Report::Report(ReportConfig cfg) : impl_(std::make_unique<Impl>()) {
  Impl &m = *impl_;
  m.cfg = std::move(cfg);
  fs::create_directories(m.cfg.output_dir);
  for (const auto &t : m.cfg.transformations) m.transformation(t.id, t.label);
  m.header = {"experiment", "data_file", "row", "transformation", "replication", m.cfg.input_column, m.cfg.output_column};
  for (const auto &c : m.cfg.criteria) m.header.push_back(c.display);
  if (m.cfg.has_score) m.header.push_back("Score");
  m.header.push_back("invalid_verdicts");
  m.header.push_back("errors");
  m.csv = std::make_unique<CsvOut>(m.cfg.output_dir / "detailed_results.csv", m.cfg.separator);
  m.csv->row(m.header);
  m.xlsx = std::make_unique<XlsxOut>(m.cfg.output_dir / "detailed_results.xlsx", "detailed_results", true);
  m.xlsx->row(text_cells(m.header), true);
  m.jsonl = std::fopen((m.cfg.output_dir / "detailed_results.jsonl.partial").c_str(), "wb");
  if (m.jsonl == nullptr) throw std::runtime_error("cannot write detailed_results.jsonl.partial");
}

Report::~Report() {
  if (impl_ && impl_->jsonl != nullptr) std::fclose(impl_->jsonl);
}

json Report::normalise(const json &rec) const {
  const ReportConfig &c = impl_->cfg;
  if (c.rows_mode) return rec;
  json r;
  r["experiment"] = c.experiment_name;
  r["data_file"] = as_text(lookup(rec, c.data_file_field));
  const json *row = lookup(rec, c.row_field);
  r["row"] = row != nullptr ? *row : json(nullptr);
  std::string tid = as_text(lookup(rec, c.transformation_field));
  r["transformation"] = tid;
  std::string label = tid;
  for (const auto &t : c.transformations)
    if (t.id == tid) label = t.label;
  r["transformation_label"] = label;
  r["replication"] = rec.value("_replication", 0);
  r["original"] = as_text(lookup(rec, c.original_field));
  const json *tr = lookup(rec, c.transformed_field);
  r["transformed"] = tr != nullptr && tr->is_string() ? *tr : json(nullptr);
  json crit = json::object();
  for (const auto &k : c.criteria) {
    const json *out = lookup(rec, k.field);
    json e;
    if (out == nullptr || !out->is_object()) {
      e = {{"value", nullptr}, {"status", "missing"}};
    } else {
      const json v = out->value("value", json(nullptr));
      bool invalid = out->value("verdict", std::string()) == "invalid";
      if (v.is_number() && !invalid) {
        e = {{"value", v}, {"status", "ok"}};
      } else {
        e = {{"value", nullptr}, {"status", invalid ? "invalid" : "undefined"}};
        if (out->contains("raw")) e["raw"] = (*out)["raw"];
      }
    }
    crit[k.name] = e;
  }
  r["criteria"] = crit;
  if (c.has_score) {
    const json *s = lookup(rec, c.score_field);
    json v = s != nullptr && s->is_object() ? s->value("value", json(nullptr)) : json(nullptr);
    r["score"] = v.is_number() ? v : json(nullptr);
  }
  json errors = json::object();
  for (const char *k : {"_errors", "_skipped"})
    if (auto it = rec.find(k); it != rec.end() && it->is_object())
      for (const auto &[node, msg] : it->items()) errors[node] = msg;
  r["errors"] = errors;
  return r;
}

void Report::add(const json &record) {
  Impl &m = *impl_;
  json r = normalise(record);
  std::string line = r.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), m.jsonl) != line.size())
    throw std::runtime_error("write failed: detailed_results.jsonl.partial");

  std::size_t ti = m.transformation(r.value("transformation", std::string()), r.value("transformation_label", std::string()));
  auto &ta = m.agg[ti];
  ++ta.rows;
  const json &errors = r.contains("errors") ? r["errors"] : json::object();
  if (!errors.empty()) ++ta.failed;
  int rep = r.value("replication", 0);

  std::vector<Cell> cells = {Cell::t(r.value("experiment", std::string())), Cell::t(r.value("data_file", std::string()))};
  cells.push_back(r["row"].is_number() ? Cell::n(r["row"].get<double>()) : Cell::t(as_text(&r["row"])));
  cells.push_back(Cell::t(m.transformations[ti].label));
  cells.push_back(Cell::n(rep));
  cells.push_back(Cell::t(as_text(&r["original"])));
  cells.push_back(Cell::t(as_text(r.contains("transformed") ? &r["transformed"] : nullptr)));
  // A criterion's value (or the Score) of this row: its cell, and its sum and count for the replication.
  auto add_value = [&](Impl::Agg &a, double v) {
    cells.push_back(Cell::n(v));
    a.reps[rep].first += v;
    a.reps[rep].second += 1;
    ++a.values;
  };
  std::string invalid_text;
  const json crit = r.value("criteria", json::object());
  for (std::size_t k = 0; k < m.cfg.criteria.size(); ++k) {
    const auto &spec = m.cfg.criteria[k];
    auto &a = ta.crit[k];
    auto it = crit.find(spec.name);
    if (it != crit.end() && (*it)["value"].is_number()) {
      add_value(a, (*it)["value"].get<double>());
    } else {
      cells.push_back(Cell{});
      std::string st = it != crit.end() ? it->value("status", std::string("missing")) : "missing";
      if (st == "invalid") {
        ++a.invalid;
        std::string raw = it->contains("raw") ? as_text(&(*it)["raw"]) : "";
        invalid_text += (invalid_text.empty() ? "" : "; ") + spec.display + ": " + raw;
      } else {
        ++a.missing;
      }
    }
  }
  if (m.cfg.has_score) {
    auto &a = ta.crit.back();
    if (r.contains("score") && r["score"].is_number()) {
      add_value(a, r["score"].get<double>());
    } else {
      cells.push_back(Cell{});
      ++a.missing;
    }
  }
  cells.push_back(Cell::t(invalid_text));
  std::string err;
  for (const auto &[node, msg] : errors.items()) err += (err.empty() ? "" : "; ") + node + ": " + as_text(&msg);
  cells.push_back(Cell::t(err));
  m.csv->row(csv_cells(cells));
  m.xlsx->row(cells);
}

// report.json: the configuration the report was made with (transformations and criteria).
void Report::Impl::write_report_json(std::vector<std::string> &files) const {
  const ReportConfig &c = cfg;
  json report_cfg = {{"experiment_name", c.experiment_name}, {"input_column_name", c.input_column},
                     {"output_column_name", c.output_column}, {"csv_separator", std::string(1, c.separator)},
                     {"has_score", c.has_score}, {"only_transform", c.only_transform}};
  json tr = json::array(), cr = json::array();
  for (const auto &t : transformations) tr.push_back({{"id", t.id}, {"label", t.label}});
  for (const auto &k : c.criteria) cr.push_back({{"name", k.name}, {"display", k.display}, {"kind", k.kind}});
  report_cfg["transformations"] = tr;
  report_cfg["criteria"] = cr;
  write_text_file(c.output_dir / "report.json", report_cfg.dump(2) + "\n");
  files.push_back("report.json");
}

Report::Impl::Summary Report::Impl::summarise() const {
  Summary s;
  for (const auto &k : cfg.criteria) s.displays.push_back(k.display);
  if (cfg.has_score) s.displays.push_back("Score");
  const std::size_t T = transformations.size(), C = s.displays.size();
  s.stats.assign(T, std::vector<std::optional<RepStats>>(C));
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < C; ++k) {
      std::vector<double> means;
      for (const auto &[rep, sn] : agg[t].crit[k].reps)
        if (sn.second > 0) means.push_back(sn.first / static_cast<double>(sn.second));
      if (!means.empty()) s.stats[t][k] = rep_stats(means);
      s.total_invalid += agg[t].crit[k].invalid;
    }
  return s;
}

// summary.csv / .xlsx: the means, invalid verdicts per criterion, rows.
void Report::Impl::write_summary_tables(const Summary &s, std::vector<std::string> &files) const {
  const ReportConfig &c = cfg;
  std::vector<std::string> h = {"transformation"};
  for (const auto &d : s.displays) h.push_back(d);
  for (std::size_t k = 0; k < c.criteria.size(); ++k) h.push_back(s.displays[k] + " invalid");
  h.push_back("rows");
  h.push_back("failed_rows");
  CsvOut csv(c.output_dir / "summary.csv", c.separator);
  XlsxOut xl(c.output_dir / "summary.xlsx", "summary", false);
  csv.row(h);
  xl.row(text_cells(h), true);
  for (std::size_t t = 0; t < transformations.size(); ++t) {
    std::vector<Cell> row = {Cell::t(transformations[t].label)};
    for (const auto &st : s.stats[t]) row.push_back(st ? Cell::n(st->mean) : Cell{});
    for (std::size_t k = 0; k < c.criteria.size(); ++k)
      row.push_back(Cell::n(static_cast<double>(agg[t].crit[k].invalid)));
    row.push_back(Cell::n(static_cast<double>(agg[t].rows)));
    row.push_back(Cell::n(static_cast<double>(agg[t].failed)));
    csv.row(csv_cells(row));
    xl.row(row);
  }
  csv.close();
  xl.close();
  files.insert(files.end(), {"summary.csv", "summary.xlsx"});
}

// summary_statistics_replications.csv / .xlsx: per transformation and criterion, the replication means' statistics.
void Report::Impl::write_replication_statistics(const Summary &s, std::vector<std::string> &files) const {
  const ReportConfig &c = cfg;
  std::vector<std::string> h = {"transformation", "criterion", "n_replications", "mean",    "std",    "min", "max",
                                "ci95_low",       "ci95_high", "values",         "invalid", "missing"};
  CsvOut csv(c.output_dir / "summary_statistics_replications.csv", c.separator);
  XlsxOut xl(c.output_dir / "summary_statistics_replications.xlsx", "statistics", false);
  csv.row(h);
  xl.row(text_cells(h), true);
  for (std::size_t t = 0; t < transformations.size(); ++t)
    for (std::size_t k = 0; k < s.displays.size(); ++k) {
      const auto &a = agg[t].crit[k];
      std::vector<Cell> row = {Cell::t(transformations[t].label), Cell::t(s.displays[k])};
      if (const auto &st = s.stats[t][k]) {
        row.insert(row.end(), {Cell::n(static_cast<double>(st->n)), Cell::n(st->mean), Cell::opt(st->sd),
                               Cell::n(st->min), Cell::n(st->max), Cell::opt(st->ci_low), Cell::opt(st->ci_high)});
      } else {
        row.insert(row.end(), {Cell::n(0), Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}});
      }
      row.insert(row.end(), {Cell::n(static_cast<double>(a.values)), Cell::n(static_cast<double>(a.invalid)),
                             Cell::n(static_cast<double>(a.missing))});
      csv.row(csv_cells(row));
      xl.row(row);
    }
  csv.close();
  xl.close();
  files.insert(files.end(), {"summary_statistics_replications.csv", "summary_statistics_replications.xlsx"});
}

// summary.md: the means table, then per transformation its criteria's statistics.
void Report::Impl::write_summary_md(const Summary &s, std::vector<std::string> &files) const {
  const std::size_t T = transformations.size(), C = s.displays.size();
  std::ostringstream md;
  md << "# " << cfg.experiment_name << "\n\n";
  md << "Each replication's mean over its rows; the table gives the mean, the minimum and the maximum of these "
        "replication means. Rows without a value (invalid verdict, failed node) are left out and counted below.\n\n";
  md << "| Transformation |";
  for (const auto &d : s.displays) md << " " << d << " |";
  md << "\n|---|";
  for (std::size_t k = 0; k < C; ++k) md << "---|";
  md << "\n";
  for (std::size_t t = 0; t < T; ++t) {
    md << "| " << transformations[t].label << " |";
    for (std::size_t k = 0; k < C; ++k)
      md << " " << (s.stats[t][k] ? num2(s.stats[t][k]->mean, 3) : std::string("–")) << " |";
    md << "\n";
  }
  for (std::size_t t = 0; t < T; ++t) {
    md << "\n## " << transformations[t].label << "\n\n";
    md << "Rows: " << agg[t].rows << " (failed: " << agg[t].failed << ")\n\n";
    md << "| Criterion | Mean | Min | Max | Replications | Invalid verdicts | Missing "
          "|\n|---|---|---|---|---|---|---|\n";
    for (std::size_t k = 0; k < C; ++k) {
      const auto &a = agg[t].crit[k];
      const auto &st = s.stats[t][k];
      md << "| " << s.displays[k] << " | ";
      if (st)
        md << num2(st->mean, 3) << " | " << num2(st->min, 3) << " | " << num2(st->max, 3) << " | " << st->n;
      else
        md << "– | – | – | 0";
      md << " | " << a.invalid << " | " << a.missing << " |\n";
    }
  }
  md << "\nInvalid verdicts in total: " << s.total_invalid << "\n";
  write_text_file(cfg.output_dir / "summary.md", md.str());
  files.push_back("summary.md");
}

// summary.png: a bar per transformation and criterion (the mean), whiskers min–max of the replication means.
void Report::Impl::write_summary_png(const Summary &s, std::vector<std::string> &files) const {
  std::vector<ChartSeries> series;
  for (std::size_t t = 0; t < transformations.size(); ++t) series.push_back({transformations[t].label, s.stats[t]});
  std::string foot = "Bars: mean over replications; whiskers: min–max of the replication means.";
  if (s.total_invalid > 0) foot += " Invalid verdicts: " + std::to_string(s.total_invalid) + " (see summary.md).";
  write_chart_png(cfg.output_dir / "summary.png", cfg.experiment_name, s.displays, series, foot, cfg.chart_width,
                  cfg.chart_height);
  files.push_back("summary.png");
}

std::vector<std::string> Report::finish() {
  Impl &m = *impl_;
  std::vector<std::string> files = {"detailed_results.csv", "detailed_results.xlsx", "detailed_results.jsonl"};
  m.csv->close();
  m.xlsx->close();
  std::fclose(m.jsonl);
  m.jsonl = nullptr;
  fs::rename(m.cfg.output_dir / "detailed_results.jsonl.partial", m.cfg.output_dir / "detailed_results.jsonl");
  m.write_report_json(files);
  if (m.cfg.only_transform) return files;
  const Impl::Summary s = m.summarise();
  m.write_summary_tables(s, files);
  m.write_replication_statistics(s, files);
  m.write_summary_md(s, files);
  m.write_summary_png(s, files);
  return files;
}

}  // namespace chatbot_report
