#include "interpreter.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
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

struct Deadline::Entry {
  unsigned long thread_id = 0;
  Clock::time_point deadline;
  const eg_host *host = nullptr;
  eg_call *call = nullptr;
  Why fired = none;
};

namespace {
// Never destroyed: the watchdog waits on them for the life of the process, and glibc's pthread_cond_destroy at
// exit would wait for it to leave its wait (it polls every 100 ms and re-enters: exits took up to a minute).
std::mutex &g_wd_mu = *new std::mutex;
std::condition_variable &g_wd_cv = *new std::condition_variable;
std::vector<Deadline::Entry *> &g_active = *new std::vector<Deadline::Entry *>;  // under g_wd_mu
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

Deadline::Deadline(double seconds, const eg_host *host, eg_call *call) : e_(new Entry) {
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
  delete e_;
  e_ = nullptr;
  return why_;
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
      Py_ssize_t n = 0;
      const char *s = PyUnicode_AsUTF8AndSize(o, &n);
      if (s == nullptr) {
        PyErr_Clear();
        throw std::runtime_error(path + ": the str is not valid UTF-8 (a lone surrogate such as '\\ud800')");
      }
      return std::string(s, static_cast<size_t>(n));
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
        Py_ssize_t n = 0;
        const char *ks = PyUnicode_AsUTF8AndSize(k, &n);
        if (ks == nullptr) {
          PyErr_Clear();
          throw std::runtime_error(path + ": a key is not valid UTF-8 (a lone surrogate)");
        }
        std::string key(ks, static_cast<size_t>(n));
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
