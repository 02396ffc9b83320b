// compression.judge's domain logic, no plugin ABI: the criteria a probe is graded on, the check of a
// configured criterion id, the per-checkpoint seed of the judging order, and a judge answer written into
// an item's result (status valid / invalid, criterion results, dimension and aggregate scores), and one
// checkpoint's grading (Grading: the items, the blind requests in their seeded order, the output).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compression/llm_params.hpp"
#include "compression/llm_util.hpp"
#include "compression/rubric.hpp"

namespace compression {

using CriteriaByType = std::map<std::string, std::vector<std::string>>;

// std::invalid_argument "<where>: unknown criterion '<id>'; known: ..." unless `id` is a rubric criterion.
void check_criterion(const std::string &id, const std::string &where);

// The criteria graded per probe type: the defaults, where `configured` (criteria_by_probe_type) lists a type its
// list instead; std::invalid_argument for an unknown criterion or one listed twice.
CriteriaByType criteria_by_type(const json &configured);

// The criteria probe `p` (id `id`, type `type`) is graded on: its own `criteria` if it lists them, else those
// of its type; std::invalid_argument for an unknown criterion or a type without criteria.
std::vector<std::string> probe_criteria(const json &p, const std::string &id, const std::string &type, const CriteriaByType &by_type);

// The seed of a checkpoint's judging order: `seed` itself, or with the record's `_meta` (record_index,
// replication) mixed in.
std::uint64_t checkpoint_seed(const json &in, std::uint64_t seed);

// Writes the parsed judge answer J into result `r`; true if it was valid.
bool write_judgement(json &r, const Judgement &J);

// What compression.judge grades with: its parameters, checked.
struct GradingOptions : LlmRequest {
  CriteriaByType by_type;
  std::map<std::string, double> weights;  // of a criterion within its dimension (absent: 1)
  std::uint64_t seed = 1;
  bool ground_truth = true;  // send the probe's expected answer
};

// One checkpoint graded: every answer of every method (ports answers_1..answers_8, compression.answer outputs)
// to every probe is an item; the answered ones are judged blind, one request each, in a seeded order. Input
// that does not fit: evalgraph::InputError. `in` and `o` must outlive the Grading.
class Grading {
 public:
  static constexpr int kSlots = 8;
  Grading(const json &in, const GradingOptions &o);
  // The judge requests (chat_request bodies), in the seeded order.
  const json &requests() const { return requests_; }
  // compression.judge's output, once the judge's `answers` (one per request, in their order) are in.
  json output(const std::vector<BatchAnswer> &answers);

 private:
  struct Item {
    std::size_t probe, slot_pos;
    std::string answer;
    std::vector<std::string> crit;
    json result;
  };
  struct Slot {
    int slot;
    const json *out;
  };
  const GradingOptions &o_;
  std::vector<Slot> slots_;
  json methods_ = json::array(), requests_ = json::array();
  std::vector<Item> items_;
  std::vector<std::size_t> judged_;  // the items judged, in the order of the requests
};

}  // namespace compression
