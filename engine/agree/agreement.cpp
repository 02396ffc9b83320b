#include "agree/agreement.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <cmath>
#include <map>

#include "util/raw_json.h"

namespace evalgraph::agree {
using nlohmann::json;

AgreementSet::AgreementSet(const Pipeline &p, std::shared_ptr<LabelSet> labels) : labels_(std::move(labels)) {
  auto add = [&](const AgreementDecl &d) {
    for (const auto &e : entries_)
      if (e.decl.metric == d.metric && e.decl.label == d.label) return;
    const LabelFieldDecl *f = labels_->decl().field(d.label);
    if (f == nullptr) return;  // reported with the plan
    Entry e;
    e.decl = d;
    e.field = static_cast<std::uint32_t>(f - labels_->decl().fields.data());
    entries_.push_back(std::move(e));
  };
  for (const auto &d : p.agreement) add(d);
  for (const auto &x : p.expect)  // a gate on a pair no agreement: entry names measures it too
    if (!x.label_field.empty() && !x.metric.empty()) {
      AgreementDecl d;
      d.metric = x.metric;
      d.node = x.node;
      d.path = x.path;
      d.label = x.label_field;
      d.at = d.metric_at = x.metric_at;
      d.label_at = x.label_at;
      add(d);
    }
  pending_.resize(entries_.size());
}

// The value at node.field[.key...] of a record.
MetricValue AgreementSet::read_metric(Entry &e, std::string_view record, const std::vector<rawjson::Member> &members) {
  std::string_view v;
  for (const auto &m : members)
    if (m.key == e.decl.node) v = record.substr(m.value.off, m.value.len);
  for (std::size_t depth = 0; depth < e.decl.path.size(); ++depth) {
    const std::string &k = e.decl.path[depth];
    // The entries of one node read the same object: split it once per record.
    const bool same = depth == 0 && v.data() == inner_of_.data() && v.size() == inner_of_.size();
    if (v.empty() || v.front() != '{') return {};
    if (!same && !rawjson::object_members(v, inner_)) return {};
    inner_of_ = depth == 0 ? v : std::string_view();
    std::string_view next;
    for (const auto &m : inner_)
      if (m.key == k) next = v.substr(m.value.off, m.value.len);
    v = next;
  }
  if (v.empty() || v == "null") return {};
  if (v == "true" || v == "false") return {MetricValue::boolean, v == "true" ? 1.0 : 0.0};
  if (v.front() == '"') {
    std::string t = key_text(v);
    auto [it, added] = e.text_ids.try_emplace(t, static_cast<std::uint32_t>(e.texts.size()));
    if (added) e.texts.push_back(t);
    return {MetricValue::text, static_cast<double>(it->second)};
  }
  if (v.front() == '{' || v.front() == '[') return {};
  return {MetricValue::number, std::strtod(std::string(v).c_str(), nullptr)};
}

void AgreementSet::reserve(std::size_t records) {
  rows_.reserve(records);
  all_labels_.reserve(records * std::max<std::size_t>(1, labels_->decl().fields.size()));
  for (auto &e : entries_) e.values.reserve(records);
}

std::string AgreementSet::observe(std::string_view record, std::size_t index) {
  inner_of_ = {};
  if (!rawjson::object_members(record, members_)) return {};
  const bool next_record = index != current_;
  if (next_record) {
    finish_record();
    current_ = index;
    scratch_.clear();
    Row row;
    if (defer_) {  // only the key now (attach_labels)
      for (const auto &m : members_)
        if (m.key == labels_->decl().key) row.key = key_text(record.substr(m.value.off, m.value.len));
    } else {
      labels_->labels_of(record, members_, scratch_, &row.key);
    }
    row.keyed = !row.key.empty();
    if (row.key.empty()) row.key = fmt::format("#{}", index + 1);
    row.labels_at = static_cast<std::uint32_t>(all_labels_.size());
    row.labels_n = static_cast<std::uint32_t>(scratch_.size());
    all_labels_.insert(all_labels_.end(), scratch_.begin(), scratch_.end());
    if (!scratch_.empty()) ++labelled_;
    rows_.push_back(std::move(row));
  }
  for (std::size_t i = 0; i < entries_.size(); ++i) pending_[i].push_back(read_metric(entries_[i], record, members_));
  if (!annotate_ || !next_record || scratch_.empty()) return {};
  return labels_->labels_json(scratch_);
}

void AgreementSet::attach_labels() {
  if (!defer_) return;
  defer_ = false;
  all_labels_.clear();
  labelled_ = 0;
  for (auto &row : rows_) {
    row.labels_at = static_cast<std::uint32_t>(all_labels_.size());
    if (row.keyed) labels_->labels_of_key(row.key, all_labels_);
    row.labels_n = static_cast<std::uint32_t>(all_labels_.size() - row.labels_at);
    if (row.labels_n > 0) ++labelled_;
  }
}

// The replications of the record gathered so far become one value per entry.
void AgreementSet::finish_record() {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    auto &reps = pending_[i];
    if (reps.empty()) continue;
    MetricValue out;
    if (reps.size() == 1) {
      out = reps[0];
    } else {
      double sum = 0;
      std::size_t n = 0;
      bool any_number = false, any_text = false;
      std::map<std::pair<int, double>, std::size_t> votes;
      for (const auto &v : reps)
        if (v.type != MetricValue::missing) {
          sum += v.num;
          ++n;
          ++votes[{v.type, v.num}];
          any_number = any_number || v.type == MetricValue::number;
          any_text = any_text || v.type == MetricValue::text;
        }
      if (n > 0 && any_number && !any_text) {  // numbers (booleans among them as 0/1): the mean
        out = {MetricValue::number, sum / static_cast<double>(n)};
      } else if (n > 0) {  // booleans and texts: the majority; a tie is left out
        std::size_t best = 0, second = 0;
        for (const auto &[val, c] : votes) {
          if (c > best) {
            second = best;
            best = c;
            out = {static_cast<MetricValue::Type>(val.first), val.second};
          } else if (c > second) {
            second = c;
          }
        }
        if (best == second) out = {MetricValue::tie, 0};
      }
    }
    entries_[i].values.push_back(out);
    reps.clear();
  }
}

json AgreementSet::evaluate() {
  finish_record();
  attach_labels();
  current_ = static_cast<std::size_t>(-1);
  json labels = {{"source", labels_->from_records() ? json("record fields") : json(labels_->decl().path.string())},
                 {"key", labels_->decl().key},
                 {"records", rows_.size()},
                 {"labelled", labelled_},
                 {"unlabelled", rows_.size() - labelled_}};
  if (!labels_->from_records()) labels["unknown_keys"] = labels_->keys() - labels_->keys_seen();
  json names = json::array();
  for (const auto &a : labels_->annotators())
    if (!a.empty()) names.push_back(a);
  labels["annotators"] = names;
  if (labels_->invalid() > 0) {
    labels["invalid"] = labels_->invalid();
    labels["first_invalid"] = labels_->first_invalid();
  }
  // The entries (and alpha) are independent: computed side by side, one thread each up to the cores there are.
  std::vector<json> results(entries_.size() + 1);
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(results.size());
  auto work = [&] {
    for (std::size_t i; (i = next++) < results.size();) try {
        results[i] = i < entries_.size() ? evaluate_entry(entries_[i], *labels_, rows_, all_labels_)
                                         : people_alpha(*labels_, rows_, all_labels_);
      } catch (...) {
        errors[i] = std::current_exception();
      }
  };
  const std::size_t threads = std::min<std::size_t>(results.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto &t : pool) t.join();
  for (const auto &e : errors)
    if (e) std::rethrow_exception(e);
  json entries = json::array();
  for (std::size_t i = 0; i < entries_.size(); ++i) entries.push_back(std::move(results[i]));
  return {{"labels", labels}, {"entries", entries}, {"alpha", std::move(results.back())}};
}

}  // namespace evalgraph::agree
