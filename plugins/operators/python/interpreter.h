// The embedded CPython of the `python` node: started once per process, one thread state per thread that calls
// into it, a watchdog that interrupts calls past their timeout, the `_evalgraph_host` module (print() to the
// run's log, evalgraph.chat through the host), and JSON <-> Python values.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "evalgraph/plugin.h"

namespace pynode {

// Starts the interpreter (once; later calls return at once). Throws std::runtime_error saying what failed.
//  - libpython is made RTLD_GLOBAL first: the engine opens plugins RTLD_LOCAL, and C extension modules
//    (_json, _decimal, _hashlib, numpy) resolve their Py* symbols globally.
//  - no signal handlers (install_signal_handlers = 0): SIGINT, SIGTERM, SIGPIPE and SIGXFSZ stay the engine's.
//  - the evalgraph package (../python next to the plugin's folder) first on sys.path; sys.stdout and
//    sys.stderr go to the run's log.
//  - the plugin library stays loaded for the life of the process (threads hold thread states created here).
void ensure_started();

// Holds the GIL with this thread's own thread state (made on the thread's first use and kept: a fresh one
// per call costs ~8 us). Nests.
class Gil {
 public:
  Gil();
  ~Gil();
  Gil(const Gil &) = delete;
  Gil &operator=(const Gil &) = delete;
};

// A new reference that is released under the GIL the holder already has.
class Ref {
 public:
  Ref() = default;
  explicit Ref(PyObject *o) : o_(o) {}
  ~Ref() { Py_XDECREF(o_); }
  Ref(Ref &&r) noexcept : o_(r.o_) { r.o_ = nullptr; }
  Ref &operator=(Ref &&r) noexcept {
    std::swap(o_, r.o_);
    return *this;
  }
  PyObject *get() const { return o_; }
  PyObject *release() {
    PyObject *o = o_;
    o_ = nullptr;
    return o;
  }
  explicit operator bool() const { return o_ != nullptr; }

 private:
  PyObject *o_ = nullptr;
};

PyObject *runtime_module();  // evalgraph._runtime (borrowed)
PyObject *timeout_type();    // evalgraph.Timeout (borrowed)

// The pending Python exception as "Type: message", cleared. (GIL held.)
std::string take_error();

// The record a thread works on, for print() (the host's log names the node and the record) and
// evalgraph.chat (the host attributes the call, its cache key and its resume entry to it). Flushes a last
// print() line that did not end in a newline when it ends. (GIL held.)
class CallScope {
 public:
  CallScope(const eg_host *host, eg_call *call);
  ~CallScope();
  CallScope(const CallScope &) = delete;
  CallScope &operator=(const CallScope &) = delete;
};

// One call's time limit: the watchdog raises evalgraph.Timeout in this thread when it passes, or when the run
// is stopped at once (the host says cancelled). Construct and end with the GIL held.
class Deadline {
 public:
  enum Why { none = 0, timeout = 1, cancelled = 2 };
  Deadline(double seconds, const eg_host *host, eg_call *call);
  ~Deadline() { end(); }
  // Unregisters and drops an interruption that was sent but not yet raised (it must not land on the thread's
  // next call). Returns why it fired, if it did.
  Why end();
  Deadline(const Deadline &) = delete;
  Deadline &operator=(const Deadline &) = delete;

  struct Entry {  // in the watchdog's list while the call runs (under its mutex)
    unsigned long thread_id = 0;
    std::chrono::steady_clock::time_point deadline;
    const eg_host *host = nullptr;
    eg_call *call = nullptr;
    Why fired = none;
  };

 private:
  Entry entry_;
  Entry *e_ = nullptr;
  Why why_ = none;
};

// JSON -> a new Python value (str, int, float, bool, None, list, dict). Throws std::runtime_error when a
// string is not valid UTF-8 (the pending Python error is cleared). (GIL held.)
PyObject *to_python(const nlohmann::json &v);
// A Python value -> JSON. Throws std::runtime_error naming the path of what is not JSON ("score: float nan is
// not a JSON number", "details.tags[2]: set is not a JSON type"). (GIL held.)
nlohmann::json to_json(PyObject *o, const std::string &path);

// The fast paths of a record (plugin.cpp falls back to to_python / to_json when they decline, which also words
// the errors): no intermediate JSON tree either way.
//
// One top-level field of a node's input: its name and its value as a new Python object.
struct Field {
  std::string_view name;  // points into the input text
  PyObject *value = nullptr;
};
// Parses a JSON object straight into Python values, skipping keys that start with '_' (the engine's own).
// Returns false, with nothing left allocated and no Python error pending, on anything it does not convert
// exactly as nlohmann + to_python would: malformed JSON, a string that is not valid UTF-8, an escaped or
// repeated top-level key, an integer beyond 18 digits, nesting deeper than max_depth. (GIL held.) On true the
// caller owns the values in `fields`.
bool parse_fields(std::string_view text, int max_depth, std::vector<Field> &fields);
// Appends a Python value as compact JSON, byte for byte what to_json(o).dump() writes (keys sorted, floats in
// nlohmann's shortest form, strings escaped as its serializer does). Returns false, leaving `out` as it was
// up to `mark` to the caller, on anything to_json would refuse or word differently (then call to_json for
// the message). (GIL held.)
bool append_json(PyObject *o, std::string &out, int depth = 0);
// Appends a UTF-8 string as a JSON string literal (quotes included), escaped as nlohmann's serializer does.
void append_json_string(std::string &out, const char *s, size_t n);

// What kind of JSON value a Python value is, as the bits evalgraph._runtime.kinds() uses (0: not JSON).
enum Kind : unsigned { K_NULL = 1, K_BOOL = 2, K_INT = 4, K_FLOAT = 8, K_STR = 16, K_LIST = 32, K_DICT = 64 };
unsigned kind_of(PyObject *o);
const char *kind_name(unsigned kinds);  // "bool", "int or None", ... (static storage)

}  // namespace pynode
