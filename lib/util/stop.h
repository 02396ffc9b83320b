// The run's stop request: one mechanism for every reason a run stops early and stays resumable (a signal, a
// cost budget, ...). What a stop does (engine/exec/executor.cpp, lib/llm/transport.cpp):
//   * no new record is read and no new LLM call starts;
//   * LLM calls waiting (queued, or sleeping in a retry backoff / Retry-After) end at once as "stopped";
//   * HTTP transfers in flight get stop_grace_s() to finish, then are cut (also "stopped");
//   * a record with a stopped call is not journaled: it and every record after it run again on --resume;
//   * the writer journals the records finished before, without feeding the sinks (--resume rewrites them), and
//     the run exits with stop_exit_code(reason).
// A hard stop (request_stop_now(): the second Ctrl-C) cuts transfers in flight too and drops what is unjournaled.
//
// Adding a reason: a value below, its exit code (util/exit_codes.h) and word in stop.cpp, and a request_stop(StopReason::x, "why")
// where the reason is detected (any thread). The LLM service and the executor need no change.
#pragma once

#include <string>

namespace evalgraph {

enum class StopReason : int { none = 0, signal = 1, budget = 2 };

// The process exit code of a run stopped for `r` (util/exit_codes.h): signal 130, budget 5 (none: 0).
int stop_exit_code(StopReason r);
// "signal", "budget", "none".
const char *stop_reason_name(StopReason r);

// Asks the run to stop (see above). Async-signal-safe (atomics and write(2) only). The first request's reason and
// detail are kept; later ones change nothing and return false. `detail` (may be null) is copied, up to 255 bytes.
bool request_stop(StopReason reason, const char *detail = nullptr);
// The hard stop: as request_stop(signal) if none was requested, then in-flight transfers are cut at once and the
// executor drops what is not journaled yet. Async-signal-safe.
void request_stop_now();

bool stop_requested();
bool stop_now_requested();
StopReason stop_reason();
std::string stop_detail();
// Seconds since the stop was requested (0 when none).
double seconds_since_stop();

// How long HTTP transfers in flight may take to finish after a stop (default 5 s; `--stop-grace`).
double stop_grace_s();
void set_stop_grace_s(double s);

// A file descriptor (an eventfd) that every stop request writes an 8-byte 1 to, so a thread sleeping in
// epoll/poll wakes at once. Returns a slot for unregister_stop_wake_fd, or -1 when all slots are taken (the
// caller then polls stop_requested() at least once a second). Not async-signal-safe (call from threads).
int register_stop_wake_fd(int fd);
void unregister_stop_wake_fd(int slot);

// A service call (LLM chat, embeddings) that the stop ended before an answer, on this thread: the host notes it,
// the executor takes the note after a node's process() and leaves that record for --resume, whatever the plugin
// made of the failed call.
void note_call_stopped();
bool take_call_stopped();  // whether one was noted since the last take (and clears the note)

// Clears a stop (a new run in the same process: tests, or a library user running several plans).
void reset_stop();

}  // namespace evalgraph
