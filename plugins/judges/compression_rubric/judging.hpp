// compression.judge's domain logic, no plugin ABI: the criteria a probe is graded on, the check of a
// configured criterion id, the per-checkpoint seed of the judging order, and a judge answer written into
// an item's result (status valid / invalid, criterion results, dimension and aggregate scores).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

}  // namespace compression
