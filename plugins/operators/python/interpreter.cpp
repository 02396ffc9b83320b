#include "interpreter.h"

#include <evalgraph/utf8.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <new>
#include <nlohmann/detail/conversions/to_chars.hpp>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace pynode {
namespace {

using Clock = std::chrono::steady_clock;

std::once_flag g_start_once;
std::string g_start_error;  // set once by start(); read after call_once
PyInterpreterState *g_interp = nullptr;
PyObject *g_runtime = nullptr;  // evalgraph._runtime
PyObject *g_timeout = nullptr;  // evalgraph.Timeout

// This thread's thread state. The thread that started the interpreter keeps its main thread state (never
// deleted); every other thread makes its own on first use and deletes it when the thread ends.
struct ThreadTls {
  PyThreadState *ts = nullptr;
  bool owned = false;
  int depth = 0;
  ~ThreadTls() {
    if (ts != nullptr && owned && depth == 0 && Py_IsInitialized()) {
      PyEval_RestoreThread(ts);
      PyThreadState_Clear(ts);
      PyThreadState_DeleteCurrent();
    }
  }
};
thread_local ThreadTls t_tls;

// The record this thread works on (CallScope) and its unfinished print() lines (by log level).
struct CallTls {
  const eg_host *host = nullptr;
  eg_call *call = nullptr;
  std::array<std::string, 4> pending;
};
thread_local CallTls t_call;

void emit(int level, const std::string &line) {
  if (t_call.host != nullptr && t_call.host->log != nullptr) {
    t_call.host->log(t_call.host, t_call.call, static_cast<eg_log_level>(level), line.c_str());
  } else {  // no record (e.g. a print() at import during `evalgraph validate`): the terminal
    std::fprintf(stderr, "python: %s\n", line.c_str());
  }
}

void flush_pending() {
  for (int level = 0; level < 4; ++level) {
    std::string &p = t_call.pending[static_cast<size_t>(level)];
    if (!p.empty()) {
      std::string line;
      line.swap(p);
      emit(level, line);
    }
  }
}

// ---- the _evalgraph_host module ----

// write(level, text): print()'s output; whole lines go to the host's log (run.log), attributed to the record.
PyObject *host_write(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  int level = 0;
  const char *text = nullptr;
  Py_ssize_t len = 0;
  if (nargs != 2 || (level = static_cast<int>(PyLong_AsLong(args[0]))) < 0 || level > 3 ||
      (text = PyUnicode_AsUTF8AndSize(args[1], &len)) == nullptr) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "write(level 0-3, text)");
    return nullptr;
  }
  std::string &p = t_call.pending[static_cast<size_t>(level)];
  p.append(text, static_cast<size_t>(len));
  for (size_t nl = p.find('\n'); nl != std::string::npos; nl = p.find('\n')) {
    std::string line = p.substr(0, nl);
    p.erase(0, nl + 1);
    emit(level, line);
  }
  return PyLong_FromSsize_t(len);
}

void release_buffer(eg_buffer &b) {
  if (b.release != nullptr) b.release(&b);
}

// chat(provider or None, request JSON) -> (ok, response JSON or error text). The wait releases the GIL.
PyObject *host_chat(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[1]) || (args[0] != Py_None && !PyUnicode_Check(args[0]))) {
    PyErr_SetString(PyExc_TypeError, "chat(provider or None, request_json)");
    return nullptr;
  }
  const eg_host *host = t_call.host;
  eg_call *call = t_call.call;
  if (host == nullptr || call == nullptr) {
    return Py_BuildValue("(Os)", Py_False,
                         "evalgraph.chat works only while the node processes a record, in the thread that called the "
                         "function (not at import, not from a thread of your own)");
  }
  if (host->chat == nullptr) return Py_BuildValue("(Os)", Py_False, "this host offers no chat service");
  const char *prov = args[0] == Py_None ? "" : PyUnicode_AsUTF8(args[0]);
  if (prov == nullptr) return nullptr;
  std::string provider = prov;
  Py_ssize_t len = 0;
  const char *req = PyUnicode_AsUTF8AndSize(args[1], &len);
  if (req == nullptr) return nullptr;
  std::string request(req, static_cast<size_t>(len));
  eg_buffer out{};
  eg_status st = EG_ERROR;
  Py_BEGIN_ALLOW_THREADS
  st = host->chat(host, call, provider.empty() ? nullptr : provider.c_str(), request.data(), request.size(), &out);
  Py_END_ALLOW_THREADS
  std::string text = out.data != nullptr ? std::string(out.data, out.size) : std::string();
  release_buffer(out);
  if (st != EG_OK && text.empty()) text = st == EG_UNSUPPORTED ? "the pipeline declares no LLM provider" : "the call failed";
  return Py_BuildValue("(Os#)", st == EG_OK ? Py_True : Py_False, text.data(), static_cast<Py_ssize_t>(text.size()));
}

PyMethodDef g_host_methods[] = {
    {"write", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&host_write)), METH_FASTCALL,
     "write(level, text): print() output to the run's log"},
    {"chat", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&host_chat)), METH_FASTCALL,
     "chat(provider, request_json) -> (ok, text): one chat completion through the engine"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_host_module = {PyModuleDef_HEAD_INIT, "_evalgraph_host", "the evalgraph engine, from inside a run",
                             -1, g_host_methods, nullptr, nullptr, nullptr, nullptr};

PyObject *init_host_module() { return PyModule_Create(&g_host_module); }

// ---- the watchdog ----
}  // namespace

namespace {
// Never destroyed: the watchdog waits on them for the life of the process, and glibc's pthread_cond_destroy at
// exit would wait for it to leave its wait (it polls every 100 ms and re-enters: exits took up to a minute).
// Constructed in static storage, not on the heap: a process that loads the plugin and unloads it unused
// (`evalgraph plugins`, validate without a python node) then leaves nothing behind for LeakSanitizer to report.
template <class T>
struct Immortal {
  alignas(T) unsigned char bytes[sizeof(T)];
  T &get() { return *new (bytes) T; }  // called once per object, at static initialisation
};
Immortal<std::mutex> g_wd_mu_storage;
Immortal<std::condition_variable> g_wd_cv_storage;
Immortal<std::vector<Deadline::Entry *>> g_active_storage;
std::mutex &g_wd_mu = g_wd_mu_storage.get();
std::condition_variable &g_wd_cv = g_wd_cv_storage.get();
std::vector<Deadline::Entry *> &g_active = g_active_storage.get();  // under g_wd_mu
Clock::time_point g_wd_next = Clock::time_point::max();  // when the watchdog wakes next

Deadline::Why due(const Deadline::Entry &e, Clock::time_point now) {
  if (e.fired != Deadline::none) return Deadline::none;
  if (e.host != nullptr && e.host->is_cancelled != nullptr && e.host->is_cancelled(e.host, e.call) != 0)
    return Deadline::cancelled;
  return e.deadline <= now ? Deadline::timeout : Deadline::none;
}

// Wakes at the earliest deadline, and at least every kPoll to notice a run that is being stopped: a call
// only wakes it when its deadline comes before that (a short timeout_s), so a call costs no context switch.
[[noreturn]] void watchdog() {
  constexpr auto kPoll = std::chrono::milliseconds(100);
  std::unique_lock lk(g_wd_mu);
  for (;;) {
    auto now = Clock::now();
    bool any_due = false;
    auto next = now + kPoll;
    for (auto *e : g_active) {
      if (due(*e, now) != Deadline::none) any_due = true;
      else if (e->fired == Deadline::none) next = std::min(next, e->deadline);
    }
    if (any_due) {
      // The GIL first, then the list (the order a worker takes them in): a worker that holds the GIL cannot
      // be between its call's end and Deadline::end() while an interruption is sent to it.
      lk.unlock();
      {
        Gil gil;
        std::lock_guard l2(g_wd_mu);
        now = Clock::now();
        for (auto *e : g_active) {
          Deadline::Why why = due(*e, now);
          if (why == Deadline::none) continue;
          e->fired = why;
          PyThreadState_SetAsyncExc(e->thread_id, g_timeout);
        }
      }
      lk.lock();
      continue;
    }
    g_wd_next = next;
    g_wd_cv.wait_until(lk, next);
  }
}

std::filesystem::path library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&ensure_started), &info) == 0 || info.dli_fname == nullptr) return {};
  return std::filesystem::absolute(info.dli_fname).parent_path();
}

void start() {
  // 1. libpython into the global namespace, and this library kept loaded for good.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&Py_InitializeFromConfig), &info) != 0 && info.dli_fname != nullptr) {
    if (dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == nullptr &&
        dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      g_start_error = std::string("cannot make libpython global: ") + dlerror();
      return;
    }
  }
  Dl_info self{};
  if (dladdr(reinterpret_cast<void *>(&ensure_started), &self) != 0 && self.dli_fname != nullptr)
    dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);

  std::filesystem::path package = library_dir().parent_path() / "python";
  if (!std::filesystem::exists(package / "evalgraph" / "_runtime.py")) {
    g_start_error = "the evalgraph Python package is missing: expected " + (package / "evalgraph").string() +
                    " (build the target python_package, or reinstall)";
    return;
  }

  if (Py_IsInitialized() == 0) {
    if (PyImport_AppendInittab("_evalgraph_host", &init_host_module) != 0) {
      g_start_error = "cannot register the _evalgraph_host module";
      return;
    }
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;  // Ctrl-C, SIGTERM, SIGPIPE, SIGXFSZ stay the engine's
    config.parse_argv = 0;
    config.configure_c_stdio = 0;  // the engine's stdio stays as it is
    PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, EVALGRAPH_PYTHON_EXECUTABLE);
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
      g_start_error = std::string("cannot start Python: ") + (st.err_msg != nullptr ? st.err_msg : "(no message)");
      return;
    }
    t_tls.ts = PyThreadState_Get();
    t_tls.owned = false;
  } else {  // a host that already runs Python (an engine embedded in a Python program)
    PyGILState_Ensure();
    t_tls.ts = PyThreadState_Get();
    t_tls.owned = false;
  }
  g_interp = PyThreadState_Get()->interp;

  std::string setup = "import sys\nsys.path.insert(0, " + nlohmann::json(package.string()).dump() +
                      ")\nimport evalgraph, evalgraph._runtime\nevalgraph._runtime.install_streams()\n";
  if (PyRun_SimpleString(setup.c_str()) != 0) {
    g_start_error = "cannot import the evalgraph package from " + package.string();
  } else {
    PyObject *mod = PyImport_ImportModule("evalgraph._runtime");
    PyObject *pkg = PyImport_ImportModule("evalgraph");
    g_runtime = mod;
    g_timeout = pkg != nullptr ? PyObject_GetAttrString(pkg, "Timeout") : nullptr;
    Py_XDECREF(pkg);
    if (g_runtime == nullptr || g_timeout == nullptr) {
      PyErr_Clear();
      g_start_error = "the evalgraph package has no _runtime or Timeout";
    }
  }
  PyEval_SaveThread();  // the GIL goes back; every call takes it with its thread's own state
  if (g_start_error.empty()) std::thread(watchdog).detach();
}

std::array<std::string, 128> make_kind_names() {
  std::array<std::string, 128> names;
  const char *words[] = {"None", "bool", "int", "float", "str", "list", "dict"};
  for (unsigned k = 0; k < 128; ++k) {
    std::string s;
    for (unsigned b = 0; b < 7; ++b) {
      if ((k & (1u << b)) == 0 || (b == 2 && (k & K_FLOAT) != 0)) continue;  // float includes int
      s += (s.empty() ? "" : " or ") + std::string(words[b]);
    }
    names[k] = k == 127 ? "any JSON value" : s;
  }
  return names;
}

}  // namespace

void ensure_started() {
  std::call_once(g_start_once, start);
  if (!g_start_error.empty()) throw std::runtime_error(g_start_error);
}

Gil::Gil() {
  if (t_tls.depth++ > 0) return;
  if (t_tls.ts == nullptr) {
    t_tls.ts = PyThreadState_New(g_interp);
    t_tls.owned = true;
  }
  PyEval_RestoreThread(t_tls.ts);
}

Gil::~Gil() {
  if (--t_tls.depth > 0) return;
  PyEval_SaveThread();
}

PyObject *runtime_module() { return g_runtime; }
PyObject *timeout_type() { return g_timeout; }

std::string take_error() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  std::string out = type != nullptr ? reinterpret_cast<PyTypeObject *>(type)->tp_name : "error";
  if (value != nullptr) {
    PyObject *s = PyObject_Str(value);
    const char *c = s != nullptr ? PyUnicode_AsUTF8(s) : nullptr;
    if (c != nullptr && *c != '\0') out += std::string(": ") + c;
    Py_XDECREF(s);
  }
  PyErr_Clear();
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return out;
}

CallScope::CallScope(const eg_host *host, eg_call *call) {
  t_call.host = host;
  t_call.call = call;
}

CallScope::~CallScope() {
  flush_pending();
  t_call.host = nullptr;
  t_call.call = nullptr;
}

Deadline::Deadline(double seconds, const eg_host *host, eg_call *call) : e_(&entry_) {
  e_->thread_id = PyThreadState_Get()->thread_id;
  e_->deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  e_->host = host;
  e_->call = call;
  std::lock_guard lk(g_wd_mu);
  g_active.push_back(e_);
  if (e_->deadline < g_wd_next) g_wd_cv.notify_one();
}

Deadline::Why Deadline::end() {
  if (e_ == nullptr) return why_;
  {
    std::lock_guard lk(g_wd_mu);
    g_active.erase(std::find(g_active.begin(), g_active.end(), e_));
    why_ = e_->fired;
  }
  // Sent but perhaps not raised (the function returned first): drop it, or it would end this thread's next call.
  if (why_ != none) PyThreadState_SetAsyncExc(e_->thread_id, nullptr);
  e_ = nullptr;
  return why_;
}

// ---- the fast paths: JSON text <-> Python values without a JSON tree in between ----
namespace {

// Strict UTF-8 (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF), as nlohmann's lexer and
// Python's decoder both check it.
bool valid_utf8(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (n - i < len) return false;
    if (s[i + 1] < lo || s[i + 1] > hi) return false;
    for (size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return false;
    i += len;
  }
  return true;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct FastParser {
  const char *p, *end;
  int max_depth;
  std::string scratch;

  void ws() {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  }

  bool hex4(unsigned &cp) {
    if (end - p < 4) return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = *p++;
      cp <<= 4;
      if (c >= '0' && c <= '9') cp |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') cp |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') cp |= static_cast<unsigned>(c - 'A' + 10);
      else return false;
    }
    return true;
  }

  // A string literal at p: 0 malformed, 1 without escapes (s, n point into the text, not yet checked as
  // UTF-8), 2 with escapes (s, n point into scratch).
  int string(const char *&s, size_t &n) {
    if (p >= end || *p != '"') return 0;
    const char *start = ++p;
    while (p < end && *p != '"' && *p != '\\') {
      if (static_cast<unsigned char>(*p) < 0x20) return 0;
      ++p;
    }
    if (p >= end) return 0;
    if (*p == '"') {
      s = start;
      n = static_cast<size_t>(p - start);
      ++p;
      return 1;
    }
    scratch.assign(start, static_cast<size_t>(p - start));
    while (p < end) {
      char c = *p++;
      if (c == '"') {
        s = scratch.data();
        n = scratch.size();
        return 2;
      }
      if (static_cast<unsigned char>(c) < 0x20) return 0;
      if (c != '\\') {
        scratch.push_back(c);
        continue;
      }
      if (p >= end) return 0;
      switch (*p++) {
        case '"': scratch.push_back('"'); break;
        case '\\': scratch.push_back('\\'); break;
        case '/': scratch.push_back('/'); break;
        case 'b': scratch.push_back('\b'); break;
        case 'f': scratch.push_back('\f'); break;
        case 'n': scratch.push_back('\n'); break;
        case 'r': scratch.push_back('\r'); break;
        case 't': scratch.push_back('\t'); break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(cp)) return 0;
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: a low one must follow
            unsigned low = 0;
            if (end - p < 2 || p[0] != '\\' || p[1] != 'u') return 0;
            p += 2;
            if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return 0;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return 0;
          }
          evalgraph::utf8::append(scratch, cp);
          break;
        }
        default: return 0;
      }
    }
    return 0;
  }

  // A string as a new str (nullptr, no error pending, when malformed or not UTF-8).
  PyObject *str() {
    const char *s = nullptr;
    size_t n = 0;
    if (string(s, n) == 0) return nullptr;
    PyObject *o = PyUnicode_DecodeUTF8(s, static_cast<Py_ssize_t>(n), nullptr);
    if (o == nullptr) PyErr_Clear();
    return o;
  }

  bool literal(const char *word, size_t n) {
    if (static_cast<size_t>(end - p) < n || std::memcmp(p, word, n) != 0) return false;
    p += n;
    return true;
  }

  // A number: an int when it has no fraction or exponent (up to 18 digits: more may not fit int64, and
  // nlohmann then makes it unsigned or a float), else a float parsed as strtod does (correctly rounded).
  PyObject *number(bool build) {
    const char *start = p;
    if (p < end && *p == '-') ++p;
    const char *digits = p;
    if (p < end && *p == '0') {
      ++p;
    } else if (p < end && *p >= '1' && *p <= '9') {
      while (p < end && is_digit(*p)) ++p;
    } else {
      return nullptr;
    }
    size_t ndigits = static_cast<size_t>(p - digits);
    bool is_float = false;
    if (p < end && *p == '.') {
      ++p;
      if (p >= end || !is_digit(*p)) return nullptr;
      while (p < end && is_digit(*p)) ++p;
      is_float = true;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      ++p;
      if (p < end && (*p == '+' || *p == '-')) ++p;
      if (p >= end || !is_digit(*p)) return nullptr;
      while (p < end && is_digit(*p)) ++p;
      is_float = true;
    }
    if (is_float) {
      double d = 0;
      auto [ptr, ec] = std::from_chars(start, p, d);
      if (ec != std::errc() || ptr != p) return nullptr;  // out of range: the general path decides
      return build ? PyFloat_FromDouble(d) : Py_NewRef(Py_None);
    }
    if (ndigits > 18) return nullptr;
    long long v = 0;
    for (const char *c = digits; c < p; ++c) v = v * 10 + (*c - '0');
    if (*start == '-') v = -v;
    return build ? PyLong_FromLongLong(v) : Py_NewRef(Py_None);
  }

  // A value as a new Python object; build = false checks it and answers None (a field the node skips).
  PyObject *value(int depth, bool build) {
    ws();
    if (p >= end) return nullptr;
    switch (*p) {
      case '{': return object(depth + 1, build);
      case '[': return array(depth + 1, build);
      case '"': {
        if (build) return str();
        const char *s = nullptr;
        size_t n = 0;
        if (string(s, n) == 0 || !valid_utf8(reinterpret_cast<const unsigned char *>(s), n)) return nullptr;
        return Py_NewRef(Py_None);
      }
      case 't': return literal("true", 4) ? Py_NewRef(build ? Py_True : Py_None) : nullptr;
      case 'f': return literal("false", 5) ? Py_NewRef(build ? Py_False : Py_None) : nullptr;
      case 'n': return literal("null", 4) ? Py_NewRef(Py_None) : nullptr;
      default: return number(build);
    }
  }

  // An object or an array, at its '{' or '[': `item` reads one member or element into the container (false:
  // not JSON we take); `close` ends it.
  template <class Item> PyObject *container(int depth, bool build, char close, Item item) {
    if (depth > max_depth) return nullptr;
    ++p;  // '{' or '['
    Ref c(!build ? Py_NewRef(Py_None) : close == '}' ? PyDict_New() : PyList_New(0));
    if (!c) {
      PyErr_Clear();
      return nullptr;
    }
    ws();
    if (p < end && *p == close) {
      ++p;
      return c.release();
    }
    for (;;) {
      if (!item(c.get())) return nullptr;
      ws();
      if (p < end && *p == ',') {
        ++p;
        continue;
      }
      if (p < end && *p == close) {
        ++p;
        return c.release();
      }
      return nullptr;
    }
  }

  PyObject *object(int depth, bool build) {
    return container(depth, build, '}', [&](PyObject *d) {
      ws();
      Ref key;
      if (build) {
        key = Ref(str());
      } else {
        const char *s = nullptr;
        size_t n = 0;
        if (string(s, n) != 0 && valid_utf8(reinterpret_cast<const unsigned char *>(s), n)) key = Ref(Py_NewRef(Py_None));
      }
      if (!key) return false;
      ws();
      if (p >= end || *p != ':') return false;
      ++p;
      Ref v(value(depth, build));
      if (!v) return false;
      if (build && PyDict_SetItem(d, key.get(), v.get()) != 0) {
        PyErr_Clear();
        return false;
      }
      return true;
    });
  }

  PyObject *array(int depth, bool build) {
    return container(depth, build, ']', [&](PyObject *list) {
      Ref v(value(depth, build));
      if (!v) return false;
      if (build && PyList_Append(list, v.get()) != 0) {
        PyErr_Clear();
        return false;
      }
      return true;
    });
  }
};

void append_uint(std::string &out, unsigned long long v, bool negative) {
  char buf[24];
  char *e = buf + sizeof buf, *b = e;
  do {
    *--b = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  if (negative) *--b = '-';
  out.append(b, static_cast<size_t>(e - b));
}

// A str's text as UTF-8 (kept by the object), or none when it has no UTF-8 form (a lone surrogate); the Python
// error is cleared either way, for the caller to decline or to word its own.
std::optional<std::string_view> utf8_of(PyObject *str) {
  Py_ssize_t n = 0;
  const char *s = PyUnicode_AsUTF8AndSize(str, &n);
  if (s == nullptr) {
    PyErr_Clear();
    return std::nullopt;
  }
  return std::string_view(s, static_cast<size_t>(n));
}

}  // namespace

bool parse_fields(std::string_view text, int max_depth, std::vector<Field> &fields) {
  // Two levels short of the general path's bound: whatever is taken here, it takes too (its own count of
  // depth may start elsewhere); what is deeper goes there and gets its message.
  FastParser ps{text.data(), text.data() + text.size(), max_depth - 2, {}};
  fields.clear();
  auto fail = [&] {
    for (auto &f : fields) Py_XDECREF(f.value);
    fields.clear();
    PyErr_Clear();
    return false;
  };
  ps.ws();
  if (ps.p >= ps.end || *ps.p != '{') return fail();
  ++ps.p;
  ps.ws();
  if (ps.p < ps.end && *ps.p == '}') {
    ++ps.p;
  } else {
    for (;;) {
      ps.ws();
      const char *s = nullptr;
      size_t n = 0;
      // An escaped key, or one that is not UTF-8: the general path.
      if (ps.string(s, n) != 1 || !valid_utf8(reinterpret_cast<const unsigned char *>(s), n)) return fail();
      std::string_view name(s, n);
      ps.ws();
      if (ps.p >= ps.end || *ps.p != ':') return fail();
      ++ps.p;
      bool skip = !name.empty() && name[0] == '_';  // the engine's own fields (_meta): checked, not converted
      PyObject *v = ps.value(1, !skip);
      if (v == nullptr) return fail();
      if (skip) {
        Py_DECREF(v);
      } else {
        for (const auto &f : fields) {
          if (f.name == name) {  // a repeated key: nlohmann keeps the last, a call would refuse both
            Py_DECREF(v);
            return fail();
          }
        }
        fields.push_back({name, v});
      }
      ps.ws();
      if (ps.p < ps.end && *ps.p == ',') {
        ++ps.p;
        continue;
      }
      if (ps.p < ps.end && *ps.p == '}') {
        ++ps.p;
        break;
      }
      return fail();
    }
  }
  ps.ws();
  if (ps.p != ps.end) return fail();
  return true;
}

void append_json_string(std::string &out, const char *s, size_t n) {
  out += '"';
  size_t run = 0;  // bytes copied as they are, pending
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++run;
      continue;
    }
    out.append(s + i - run, run);
    run = 0;
    evalgraph::utf8::append_json_escape(out, c);
  }
  out.append(s + n - run, run);
  out += '"';
}

bool append_json(PyObject *o, std::string &out, int depth) {
  if (depth > 200) return false;  // deeper: to_json, which knows the interpreter's recursion limit
  switch (kind_of(o)) {
    case K_NULL: out += "null"; return true;
    case K_BOOL: out += o == Py_True ? "true" : "false"; return true;
    case K_INT: {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow == 0) {
        if (v == -1 && PyErr_Occurred()) {
          PyErr_Clear();
          return false;
        }
        append_uint(out, v < 0 ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v), v < 0);
        return true;
      }
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      append_uint(out, u, false);
      return true;
    }
    case K_FLOAT: {
      double d = PyFloat_AS_DOUBLE(o);
      if (!std::isfinite(d)) return false;
      char buf[64];
      char *e = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);  // what nlohmann's dump() writes
      out.append(buf, static_cast<size_t>(e - buf));
      return true;
    }
    case K_STR: {
      const auto s = utf8_of(o);
      if (!s) return false;
      append_json_string(out, s->data(), s->size());
      return true;
    }
    case K_LIST: {
      PyObject **items = PySequence_Fast_ITEMS(o);  // a list or a tuple (kind_of)
      Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      out += '[';
      for (Py_ssize_t i = 0; i < n; ++i) {
        if (i > 0) out += ',';
        if (!append_json(items[i], out, depth + 1)) return false;
      }
      out += ']';
      return true;
    }
    case K_DICT: {
      std::vector<std::pair<std::string_view, PyObject *>> items;
      items.reserve(static_cast<size_t>(PyDict_GET_SIZE(o)));
      PyObject *k = nullptr, *v = nullptr;
      Py_ssize_t pos = 0;
      while (PyDict_Next(o, &pos, &k, &v)) {
        if (!PyUnicode_Check(k)) return false;
        const auto ks = utf8_of(k);
        if (!ks) return false;
        items.emplace_back(*ks, v);
      }
      std::sort(items.begin(), items.end(), [](const auto &a, const auto &b) { return a.first < b.first; });  // std::map's order
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ',';
        append_json_string(out, items[i].first.data(), items[i].first.size());
        out += ':';
        if (!append_json(items[i].second, out, depth + 1)) return false;
      }
      out += '}';
      return true;
    }
    default: return false;
  }
}

PyObject *to_python(const nlohmann::json &v) {
  using T = nlohmann::json::value_t;
  switch (v.type()) {
    case T::null: return Py_NewRef(Py_None);
    case T::boolean: return PyBool_FromLong(v.get<bool>() ? 1 : 0);
    case T::number_integer: return PyLong_FromLongLong(v.get<long long>());
    case T::number_unsigned: return PyLong_FromUnsignedLongLong(v.get<unsigned long long>());
    case T::number_float: return PyFloat_FromDouble(v.get<double>());
    case T::string: {
      const auto &s = v.get_ref<const std::string &>();
      PyObject *o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), nullptr);
      if (o == nullptr) throw std::runtime_error("input: a string is not valid UTF-8 (" + take_error() + ")");
      return o;
    }
    case T::array: {
      Ref list(PyList_New(static_cast<Py_ssize_t>(v.size())));
      Py_ssize_t i = 0;
      for (const auto &x : v) PyList_SET_ITEM(list.get(), i++, to_python(x));
      return list.release();
    }
    case T::object: {
      Ref dict(PyDict_New());
      for (const auto &[k, x] : v.items()) {
        Ref key(PyUnicode_DecodeUTF8(k.data(), static_cast<Py_ssize_t>(k.size()), nullptr));
        if (!key) throw std::runtime_error("input: a key is not valid UTF-8 (" + take_error() + ")");
        Ref val(to_python(x));
        PyDict_SetItem(dict.get(), key.get(), val.get());
      }
      return dict.release();
    }
    default: return Py_NewRef(Py_None);
  }
}

unsigned kind_of(PyObject *o) {
  if (o == Py_None) return K_NULL;
  if (PyBool_Check(o)) return K_BOOL;
  if (PyLong_Check(o)) return K_INT;
  if (PyFloat_Check(o)) return K_FLOAT;
  if (PyUnicode_Check(o)) return K_STR;
  if (PyList_Check(o) || PyTuple_Check(o)) return K_LIST;
  if (PyDict_Check(o)) return K_DICT;
  return 0;
}

const char *kind_name(unsigned kinds) {
  static const std::array<std::string, 128> names = make_kind_names();
  return names[kinds & 127u].c_str();
}

nlohmann::json to_json(PyObject *o, const std::string &path) {
  if (Py_EnterRecursiveCall(" converting a check's result to JSON") != 0) {
    PyErr_Clear();
    throw std::runtime_error(path + ": nested too deeply");
  }
  struct Leave {
    ~Leave() { Py_LeaveRecursiveCall(); }
  } leave;
  switch (kind_of(o)) {
    case K_NULL: return nullptr;
    case K_BOOL: return o == Py_True;
    case K_INT: {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow == 0) return v;
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (!PyErr_Occurred()) return u;
      PyErr_Clear();
      throw std::runtime_error(path + ": the integer does not fit in 64 bits (return it as a float or a str)");
    }
    case K_FLOAT: {
      double d = PyFloat_AS_DOUBLE(o);
      if (!std::isfinite(d))
        throw std::runtime_error(path + ": float " + (std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf") +
                                 " is not a JSON number (return None for \"no value\")");
      return d;
    }
    case K_STR: {
      const auto s = utf8_of(o);
      if (!s) throw std::runtime_error(path + ": the str is not valid UTF-8 (a lone surrogate such as '\\ud800')");
      return std::string(*s);
    }
    case K_LIST: {
      nlohmann::json a = nlohmann::json::array();
      Ref seq(PySequence_Fast(o, "a list"));
      Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
      PyObject **items = PySequence_Fast_ITEMS(seq.get());
      for (Py_ssize_t i = 0; i < n; ++i) a.push_back(to_json(items[i], path + "[" + std::to_string(i) + "]"));
      return a;
    }
    case K_DICT: {
      nlohmann::json obj = nlohmann::json::object();
      PyObject *k = nullptr, *v = nullptr;
      Py_ssize_t pos = 0;
      while (PyDict_Next(o, &pos, &k, &v)) {
        if (!PyUnicode_Check(k)) {
          Ref r(PyObject_Repr(k));
          const char *kr = r ? PyUnicode_AsUTF8(r.get()) : nullptr;
          PyErr_Clear();
          throw std::runtime_error(path + ": key " + (kr != nullptr ? kr : "?") + " is not a str (JSON keys are strings)");
        }
        const auto ks = utf8_of(k);
        if (!ks) throw std::runtime_error(path + ": a key is not valid UTF-8 (a lone surrogate)");
        std::string key(*ks);
        obj[key] = to_json(v, path + "." + key);
      }
      return obj;
    }
    default:
      throw std::runtime_error(path + ": " + Py_TYPE(o)->tp_name +
                               " is not a JSON type (return bool, int, float, str, list, dict or None)");
  }
}

}  // namespace pynode
