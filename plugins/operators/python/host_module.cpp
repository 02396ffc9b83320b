// The _evalgraph_host module of the python node (interpreter.h): print() to the run's log and evalgraph.chat through
// the host, for the record that CallScope names.
#include <array>
#include <cstdio>
#include <string>

#include "interpreter.h"
#include "interpreter_internal.h"

namespace pynode {
namespace {

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

}  // namespace

PyObject *detail::init_host_module() { return PyModule_Create(&g_host_module); }

CallScope::CallScope(const eg_host *host, eg_call *call) {
  t_call.host = host;
  t_call.call = call;
}

CallScope::~CallScope() {
  flush_pending();
  t_call.host = nullptr;
  t_call.call = nullptr;
}

}  // namespace pynode
