// The process exit codes of evalgraph, stated once: the CLI, the engine's entries, `expect:`, compare's gate and
// the run's stop (util/stop.h) return these. The README's "Exit codes" table says what each means to a user
// (tests/engine/test_exit_codes.cpp holds the two together).
#pragma once

namespace evalgraph::exit_code {

inline constexpr int ok = 0;
inline constexpr int records_failed = 1;  // the run finished, but some records had a failed or skipped node
inline constexpr int usage = 2;           // usage or configuration error: nothing was run
inline constexpr int runtime = 3;         // runtime error: unreadable or broken data, I/O failure
inline constexpr int check_failed = 4;    // an expectation (`expect:`) or a --fail-if-worse gate failed
inline constexpr int budget = 5;          // the cost budget was reached (resumable)
inline constexpr int interrupted = 130;   // stopped by SIGTERM or Ctrl-C (resumable)

// Every code above, in order.
inline constexpr int all[] = {ok, records_failed, usage, runtime, check_failed, budget, interrupted};

}  // namespace evalgraph::exit_code
