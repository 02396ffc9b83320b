// One alternative of expected calls against the actual calls: the maximum one-to-one assignment the order mode
// allows (order-preserving for exact and in_order: a longest common subsequence; any pairing for any_order and
// subset: a maximum bipartite matching, Hopcroft-Karp), whether the mode's condition holds, and the first
// mismatch in words.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <queue>
#include <stdexcept>

#include "trajectory.hpp"

namespace trajectory {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// hit(i, j): expected call i is satisfied by actual call j.
struct Table {
  std::size_t n = 0, m = 0;
  std::vector<std::uint8_t> cells;
  bool hit(std::size_t i, std::size_t j) const { return cells[i * m + j] != 0; }
};

Table match_table(const Alternative &e, const std::vector<ActualCall> &a, const Regexes &rx) {
  Table t{e.size(), a.size(), {}};
  if (t.n != 0 && t.m > kMaxPairs / t.n)
    throw std::invalid_argument("too many calls to compare: " + std::to_string(t.n) + " expected x " +
                                std::to_string(t.m) + " actual calls is more than " + std::to_string(kMaxPairs) +
                                " pairs");
  t.cells.assign(t.n * t.m, 0);
  for (std::size_t i = 0; i < t.n; ++i)
    for (std::size_t j = 0; j < t.m; ++j)
      t.cells[i * t.m + j] = e[i].name == a[j].name && arguments_match(e[i], a[j], rx, nullptr) ? 1 : 0;
  return t;
}

// The longest common subsequence under hit(), each expected call paired with the earliest actual call that
// keeps the assignment maximal.
std::vector<Pair> ordered_assignment(const Table &t) {
  const std::size_t w = t.m + 1;
  std::vector<std::uint32_t> len((t.n + 1) * w, 0);  // len[i*w+j]: of expected[i..] and actual[j..]
  for (std::size_t i = t.n; i-- > 0;)
    for (std::size_t j = t.m; j-- > 0;)
      len[i * w + j] = t.hit(i, j) ? 1 + len[(i + 1) * w + j + 1] : std::max(len[(i + 1) * w + j], len[i * w + j + 1]);
  std::vector<Pair> out;
  std::size_t i = 0, j = 0;
  while (i < t.n && j < t.m) {
    if (t.hit(i, j) && len[i * w + j] == 1 + len[(i + 1) * w + j + 1])
      out.push_back({i++, j++});
    else if (len[i * w + j + 1] == len[i * w + j])
      ++j;
    else
      ++i;
  }
  return out;
}

// Hopcroft-Karp over hit(), after a greedy start that gives each expected call its earliest free actual call.
class BipartiteMatching {
 public:
  explicit BipartiteMatching(const Table &t) : adj_(t.n), to_actual_(t.n, kNone), to_expected_(t.m, kNone) {
    for (std::size_t i = 0; i < t.n; ++i)
      for (std::size_t j = 0; j < t.m; ++j)
        if (t.hit(i, j)) adj_[i].push_back(j);
    for (std::size_t i = 0; i < t.n; ++i)
      for (std::size_t j : adj_[i])
        if (to_expected_[j] == kNone) {
          to_actual_[i] = j, to_expected_[j] = i;
          break;
        }
    while (layers())
      for (std::size_t i = 0; i < t.n; ++i)
        if (to_actual_[i] == kNone) augment(i);
  }
  std::vector<Pair> pairs() const {
    std::vector<Pair> out;
    for (std::size_t i = 0; i < to_actual_.size(); ++i)
      if (to_actual_[i] != kNone) out.push_back({i, to_actual_[i]});
    return out;
  }

 private:
  // Breadth-first layers from the free expected calls; true when an augmenting path exists.
  bool layers() {
    std::queue<std::size_t> q;
    dist_.assign(adj_.size(), kNone);
    next_.assign(adj_.size(), 0);
    for (std::size_t i = 0; i < adj_.size(); ++i)
      if (to_actual_[i] == kNone) dist_[i] = 0, q.push(i);
    bool found = false;
    while (!q.empty()) {
      const std::size_t i = q.front();
      q.pop();
      for (std::size_t j : adj_[i]) {
        const std::size_t k = to_expected_[j];
        if (k == kNone)
          found = true;
        else if (dist_[k] == kNone)
          dist_[k] = dist_[i] + 1, q.push(k);
      }
    }
    return found;
  }
  // Depth-first along the layers (depth at most the matching's size, min(n, m) <= sqrt(kMaxPairs)).
  bool augment(std::size_t i) {
    for (; next_[i] < adj_[i].size(); ++next_[i]) {
      const std::size_t j = adj_[i][next_[i]], k = to_expected_[j];
      if (k == kNone || (dist_[k] == dist_[i] + 1 && augment(k))) {
        to_actual_[i] = j, to_expected_[j] = i;
        return true;
      }
    }
    dist_[i] = kNone;
    return false;
  }

  std::vector<std::vector<std::size_t>> adj_;
  std::vector<std::size_t> to_actual_, to_expected_, dist_, next_;
};

std::string quoted(const std::string &s) { return "'" + s + "'"; }
std::string calls_word(std::size_t n) { return std::to_string(n) + (n == 1 ? " call" : " calls"); }

struct Context {
  const Alternative &e;
  const std::vector<ActualCall> &a;
  const Table &t;
  const Regexes &rx;

  std::string why(std::size_t i, std::size_t j) const {
    std::string w;
    call_matches(e[i], a[j], rx, &w);
    return w;
  }
  std::size_t first_named(const std::string &name, std::size_t from, const std::vector<bool> *taken) const {
    for (std::size_t j = from; j < a.size(); ++j)
      if (a[j].name == name && (taken == nullptr || !(*taken)[j])) return j;
    return kNone;
  }
  Mismatch at(std::size_t i, std::size_t j, std::string reason) const {
    Mismatch m;
    if (j != kNone) m.index = j, m.actual = a[j].shown;
    if (i != kNone) m.expected = e[i].shown;
    m.reason = std::move(reason);
    return m;
  }
};

// exact: the first position where the expected and the actual call differ, or one list ends.
std::optional<Mismatch> exact_mismatch(const Context &c) {
  const std::size_t n = c.e.size(), m = c.a.size();
  for (std::size_t k = 0; k < std::max(n, m); ++k) {
    if (k < n && k < m && c.t.hit(k, k)) continue;
    if (k >= m)
      return c.at(k, kNone, "missing call " + quoted(c.e[k].name) + ": the trajectory ended after " + calls_word(m));
    if (k >= n)
      return c.at(kNone, k, "unexpected call " + quoted(c.a[k].name) + " after the " + calls_word(n) + " expected");
    return c.at(k, k, "call " + std::to_string(k) + " differs: " + c.why(k, k));
  }
  return std::nullopt;
}

// in_order: the first expected call that is not found after the calls matched before it (leftmost, greedy).
std::optional<Mismatch> in_order_mismatch(const Context &c) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < c.e.size(); ++i) {
    std::size_t j = pos;
    while (j < c.a.size() && !c.t.hit(i, j)) ++j;
    if (j < c.a.size()) {
      pos = j + 1;
      continue;
    }
    const std::string head = "expected call " + std::to_string(i) + " " + quoted(c.e[i].name);
    if (std::size_t same = c.first_named(c.e[i].name, pos, nullptr); same != kNone)
      return c.at(i, same,
                  head + " not found in order; the next call to it, call " + std::to_string(same) +
                      ", differs: " + c.why(i, same));
    std::string reason = pos >= c.a.size() ? head + " not found: the trajectory ended after " + calls_word(c.a.size())
                                           : head + " not found at or after call " + std::to_string(pos);
    if (std::size_t earlier = c.first_named(c.e[i].name, 0, nullptr); earlier != kNone && earlier < pos)
      reason += " (it was called earlier, at call " + std::to_string(earlier) + ": out of order)";
    return c.at(i, pos < c.a.size() ? pos : kNone, reason);
  }
  return std::nullopt;
}

// any_order: the first expected call the maximum matching left without an actual call.
std::optional<Mismatch> any_order_mismatch(const Context &c, const std::vector<Pair> &pairs) {
  std::vector<bool> expected_done(c.e.size(), false), actual_taken(c.a.size(), false);
  for (const Pair &p : pairs) expected_done[p.expected] = true, actual_taken[p.actual] = true;
  for (std::size_t i = 0; i < c.e.size(); ++i) {
    if (expected_done[i]) continue;
    const std::string head = "expected call " + std::to_string(i) + " " + quoted(c.e[i].name);
    if (std::size_t free = c.first_named(c.e[i].name, 0, &actual_taken); free != kNone)
      return c.at(i, free, head + " not found; call " + std::to_string(free) + " to it differs: " + c.why(i, free));
    if (std::size_t any = c.first_named(c.e[i].name, 0, nullptr); any != kNone)
      return c.at(i, any, head + " not found: every call to it is assigned to another expected call");
    return c.at(i, kNone, head + " was never called");
  }
  return std::nullopt;
}

// subset: the first actual call that no expected call allows.
std::optional<Mismatch> subset_mismatch(const Context &c) {
  for (std::size_t j = 0; j < c.a.size(); ++j) {
    std::size_t named = kNone;
    bool allowed = false;
    for (std::size_t i = 0; i < c.e.size() && !allowed; ++i) {
      allowed = c.t.hit(i, j);
      if (named == kNone && c.e[i].name == c.a[j].name) named = i;
    }
    if (allowed) continue;
    const std::string head = "call " + std::to_string(j) + " " + quoted(c.a[j].name);
    if (named != kNone)
      return c.at(
          named, j,
          head + " matches no expected call; expected call " + std::to_string(named) + " differs: " + c.why(named, j));
    return c.at(kNone, j, head + " is not among the expected tools");
  }
  return std::nullopt;
}

}  // namespace

AlternativeResult compare(const Alternative &expected, const std::vector<ActualCall> &actual, Order order,
                          const Regexes &rx) {
  const Table t = match_table(expected, actual, rx);
  const Context c{expected, actual, t, rx};
  AlternativeResult r;
  const bool ordered = order == Order::Exact || order == Order::InOrder;
  r.assignment = ordered ? ordered_assignment(t) : BipartiteMatching(t).pairs();
  switch (order) {
    case Order::Exact:
      r.first_mismatch = exact_mismatch(c);
      break;
    case Order::InOrder:
      r.first_mismatch = in_order_mismatch(c);
      break;
    case Order::AnyOrder:
      r.first_mismatch = any_order_mismatch(c, r.assignment);
      break;
    case Order::Subset:
      r.first_mismatch = subset_mismatch(c);
      break;
  }
  r.passed = !r.first_mismatch.has_value();
  return r;
}

}  // namespace trajectory
