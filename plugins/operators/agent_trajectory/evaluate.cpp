// A record's output: the checks on the calls themselves (forbidden tools, max_steps, repeated identical calls)
// and the comparison with the expected calls (the best alternative, its precision, recall, F1 and first
// mismatch), with every failure in words and the parameters beside.
#include <algorithm>
#include <unordered_map>

#include "trajectory.hpp"

namespace trajectory {

namespace {

json failure(const char *check, std::string message) { return {{"check", check}, {"message", std::move(message)}}; }

void check_forbidden(const std::vector<ActualCall> &a, const Options &o, json &out, json &failures) {
  json calls = json::array();
  std::size_t count = 0;
  for (std::size_t j = 0; j < a.size(); ++j) {
    if (std::find(o.forbidden.begin(), o.forbidden.end(), a[j].name) == o.forbidden.end()) continue;
    if (count++ == 0)
      failures.push_back(
          failure("forbidden", "call " + std::to_string(j) + " '" + a[j].name + "' is a forbidden tool"));
    if (calls.size() < kMaxListed) calls.push_back({{"index", j}, {"name", a[j].name}});
  }
  if (count > 1)
    failures.back()["message"] =
        failures.back()["message"].get<std::string>() + " (and " + std::to_string(count - 1) + " more forbidden calls)";
  out["forbidden_calls"] = {{"count", count}, {"calls", std::move(calls)}};
}

void check_steps(const std::vector<ActualCall> &a, const Options &o, json &failures) {
  if (o.max_steps && static_cast<long long>(a.size()) > *o.max_steps)
    failures.push_back(
        failure("max_steps", std::to_string(a.size()) + " calls, more than max_steps " + std::to_string(*o.max_steps)));
}

// A call is redundant when an earlier call has the same name and the same arguments (call_key).
void check_repeats(const std::vector<ActualCall> &a, const Options &o, json &out, json &failures) {
  std::unordered_map<std::string, std::size_t> first;
  json calls = json::array();
  std::size_t count = 0;
  for (std::size_t j = 0; j < a.size(); ++j) {
    auto [it, fresh] = first.emplace(call_key(a[j]), j);
    if (fresh) continue;
    if (count++ == 0 && !o.allow_repeats)
      failures.push_back(failure("repeats", "call " + std::to_string(j) + " '" + a[j].name + "' repeats call " +
                                                std::to_string(it->second) +
                                                " (same name and arguments) and allow_repeats is false"));
    if (calls.size() < kMaxListed) calls.push_back({{"index", j}, {"name", a[j].name}, {"same_as", it->second}});
  }
  out["redundant_calls"] = {{"count", count}, {"calls", std::move(calls)}};
}

struct Scored {
  std::size_t index = 0;
  AlternativeResult result;
  json precision, recall, f1;  // null where undefined (0/0)
};

Scored score(std::size_t index, AlternativeResult r, std::size_t n, std::size_t m) {
  Scored s{index, std::move(r), nullptr, nullptr, nullptr};
  const double k = static_cast<double>(s.result.assignment.size());
  if (m > 0) s.precision = k / static_cast<double>(m);
  if (n > 0) s.recall = k / static_cast<double>(n);
  if (m > 0 && n > 0) {
    const double p = s.precision.get<double>(), q = s.recall.get<double>();
    s.f1 = p + q > 0 ? 2 * p * q / (p + q) : 0.0;
  }
  return s;
}

// Passed first, then the higher F1, then more matched calls; the earlier alternative on a tie.
bool better(const Scored &x, const Scored &y) {
  if (x.result.passed != y.result.passed) return x.result.passed;
  const double fx = x.f1.is_null() ? -1 : x.f1.get<double>(), fy = y.f1.is_null() ? -1 : y.f1.get<double>();
  if (fx != fy) return fx > fy;
  return x.result.assignment.size() > y.result.assignment.size();
}

json mismatch_json(const std::optional<Mismatch> &m) {
  if (!m) return nullptr;
  return {{"index", m->index ? json(*m->index) : json(nullptr)},
          {"expected", m->expected},
          {"actual", m->actual},
          {"reason", m->reason}};
}

void compare_expected(const Expected &ex, const std::vector<ActualCall> &a, const Options &o, json &out,
                      json &failures) {
  std::optional<Scored> best;
  json summary = json::array();
  for (std::size_t k = 0; k < ex.alternatives.size(); ++k) {
    const Alternative &alt = ex.alternatives[k];
    Scored s = score(k, compare(alt, a, o.order, ex.regexes), alt.size(), a.size());
    summary.push_back({{"index", k},
                       {"passed", s.result.passed},
                       {"expected_calls", alt.size()},
                       {"matched", s.result.assignment.size()},
                       {"precision", s.precision},
                       {"recall", s.recall},
                       {"f1", s.f1}});
    if (!best || better(s, *best)) best = std::move(s);
  }
  json pairs = json::array();
  for (const Pair &p : best->result.assignment) pairs.push_back({{"expected", p.expected}, {"actual", p.actual}});
  out["precision"] = best->precision, out["recall"] = best->recall, out["f1"] = best->f1;
  out["matched"] = best->result.assignment.size();
  out["expected_calls"] = ex.alternatives[best->index].size();
  out["matched_alternative"] = best->index;
  out["alternatives"] = std::move(summary);
  out["assignment"] = std::move(pairs);
  out["first_mismatch"] = mismatch_json(best->result.first_mismatch);
  if (best->result.passed) return;
  std::string message = std::string(order_name(o.order)) + ": " + best->result.first_mismatch->reason;
  if (ex.alternatives.size() > 1)
    message = "none of the " + std::to_string(ex.alternatives.size()) + " alternatives holds; the closest, " +
              std::to_string(best->index) + ", " + message;
  failures.push_back(failure("order", message));
}

json parameters_json(const Expected *ex, const Options &o, const char *source) {
  return {{"order", order_name(o.order)},
          {"match", match_name(o.match)},
          {"forbidden", o.forbidden},
          {"max_steps", o.max_steps ? json(*o.max_steps) : json(nullptr)},
          {"allow_repeats", o.allow_repeats},
          {"expected_source", source},
          {"alternatives", ex != nullptr ? ex->alternatives.size() : 0}};
}

}  // namespace

json evaluate(const Expected *expected, const std::vector<ActualCall> &actual, const Options &o, const char *source) {
  json out = json::object();
  json failures = json::array();
  out["steps"] = actual.size();
  for (const char *k :
       {"precision", "recall", "f1", "matched", "expected_calls", "matched_alternative", "first_mismatch"})
    out[k] = nullptr;
  out["alternatives"] = json::array();
  out["assignment"] = json::array();
  if (expected != nullptr) compare_expected(*expected, actual, o, out, failures);
  check_forbidden(actual, o, out, failures);
  check_steps(actual, o, failures);
  check_repeats(actual, o, out, failures);
  out["passed"] = failures.empty();
  out["failures"] = std::move(failures);
  out["parameters"] = parameters_json(expected, o, source);
  return out;
}

}  // namespace trajectory
