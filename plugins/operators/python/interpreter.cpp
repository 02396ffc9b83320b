// The embedded interpreter (interpreter.h): its start (libpython global, the evalgraph package, the watchdog), and
// the GIL taken with each thread's own thread state. The watchdog and Deadline: watchdog.cpp; the _evalgraph_host
// module and CallScope: host_module.cpp; JSON <-> Python values: json_python.cpp.
#include "interpreter.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "interpreter_internal.h"

namespace pynode {
namespace {

using detail::init_host_module;
using detail::watchdog;

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

}  // namespace pynode
