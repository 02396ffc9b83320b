#pragma once
// What agreement.cpp, agreement_rank.cpp and agreement_alpha.cpp share; not part of the interface.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stats/agreement.h"
#include "stats/stats.h"

namespace evalgraph::stats::detail {

// Throws std::invalid_argument unless 0 < level < 1 (a level of 1 would make every interval infinite).
void require_level(double level);
// A defined Stat; the interval is widened to hold the value where a percentile interval misses it by rounding.
Stat interval_stat(double value, double low, double high, std::string method, std::size_t n);
// "percentile bootstrap <what> (R resamples, seed S)"
std::string bootstrap_method(const std::string &what, std::size_t resamples, std::uint64_t seed);
// The level-percentile interval of the draws (sorted in place); no draws give NaN ends.
Interval percentile_interval(std::vector<double> &draws, double level);
// kAgreementResamples multinomial resamples of the matrix's cells (same n), `stat` of each; resamples where it
// is not defined (nullopt) are left out.
Interval bootstrap_confusion(const Confusion &c, const std::function<std::optional<double>(const Confusion &)> &stat,
                             double level, std::uint64_t seed);

}  // namespace evalgraph::stats::detail
