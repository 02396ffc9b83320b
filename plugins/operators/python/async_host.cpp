#include "async_host.h"

#include <string>

#include "interpreter.h"

namespace pynode {
namespace {

struct CallContext {
  const eg_host *host = nullptr;
  eg_call *call = nullptr;
};
thread_local CallContext t_context;

constexpr const char *kCapsule = "evalgraph.call_context";

void delete_context(PyObject *capsule) { delete static_cast<CallContext *>(PyCapsule_GetPointer(capsule, kCapsule)); }

// context() -> the record this thread works on (a capsule), or None outside a call.
PyObject *async_context(PyObject *, PyObject *) {
  if (t_context.host == nullptr) return Py_NewRef(Py_None);
  auto *ctx = new CallContext(t_context);
  PyObject *capsule = PyCapsule_New(ctx, kCapsule, &delete_context);
  if (capsule == nullptr) delete ctx;
  return capsule;
}

// chat(context, provider or None, request JSON) -> (ok, response JSON or error text): the engine's chat call
// for that record, from any thread; the wait releases the GIL. The caller keeps the record's call going until
// this returns (_aio.run waits for every request it sent).
PyObject *async_chat(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 3 || !PyCapsule_IsValid(args[0], kCapsule) || !PyUnicode_Check(args[2]) ||
      (args[1] != Py_None && !PyUnicode_Check(args[1]))) {
    PyErr_SetString(PyExc_TypeError, "chat(context, provider or None, request_json)");
    return nullptr;
  }
  const auto *ctx = static_cast<const CallContext *>(PyCapsule_GetPointer(args[0], kCapsule));
  if (ctx->host->chat == nullptr) return Py_BuildValue("(Os)", Py_False, "this host offers no chat service");
  const char *prov = args[1] == Py_None ? "" : PyUnicode_AsUTF8(args[1]);
  if (prov == nullptr) return nullptr;
  std::string provider = prov;
  Py_ssize_t len = 0;
  const char *req = PyUnicode_AsUTF8AndSize(args[2], &len);
  if (req == nullptr) return nullptr;
  std::string request(req, static_cast<size_t>(len));
  eg_buffer out{};
  eg_status st = EG_ERROR;
  Py_BEGIN_ALLOW_THREADS st = ctx->host->chat(ctx->host, ctx->call, provider.empty() ? nullptr : provider.c_str(),
                                              request.data(), request.size(), &out);
  Py_END_ALLOW_THREADS std::string text = out.data != nullptr ? std::string(out.data, out.size) : std::string();
  if (out.release != nullptr) out.release(&out);
  if (st != EG_OK && text.empty())
    text = st == EG_UNSUPPORTED ? "the pipeline declares no LLM provider" : "the call failed";
  return Py_BuildValue("(Os#)", st == EG_OK ? Py_True : Py_False, text.data(), static_cast<Py_ssize_t>(text.size()));
}

PyMethodDef g_async_methods[] = {
    {"context", &async_context, METH_NOARGS, "context() -> the record this thread works on, or None"},
    {"chat", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&async_chat)), METH_FASTCALL,
     "chat(context, provider, request_json) -> (ok, text): one chat completion for that record"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_async_module = {PyModuleDef_HEAD_INIT,
                              "_evalgraph_async",
                              "evalgraph.achat's engine side",
                              -1,
                              g_async_methods,
                              nullptr,
                              nullptr,
                              nullptr,
                              nullptr};

}  // namespace

void install_async_module() {
  PyObject *modules = PyImport_GetModuleDict();  // borrowed
  if (PyDict_GetItemString(modules, "_evalgraph_async") != nullptr) return;
  Ref m(PyModule_Create(&g_async_module));
  if (!m || PyDict_SetItemString(modules, "_evalgraph_async", m.get()) != 0) throw std::runtime_error(take_error());
}

AsyncScope::AsyncScope(const eg_host *host, eg_call *call) { t_context = {host, call}; }
AsyncScope::~AsyncScope() { t_context = {}; }

}  // namespace pynode
