// python — a check written as a Python function, run in-process by an embedded CPython (interpreter.cpp).
// The script declares the node's outputs (and its parameters, by the function's signature); describe() tells
// the engine so before any record moves (evalgraph/_runtime.py does the reading). docs/python.md.
#include <evalgraph/plugin.hpp>

#include <map>

#include "interpreter.h"

namespace {

using evalgraph::json;
using pynode::Gil;
using pynode::Ref;

// The type's own parameters; a node's full schema comes from its script (describe).
const char *kSchema = R"({"type":"object","properties":{
  "file":{"type":"string","minLength":1,"description":"The script, relative to the pipeline."},
  "function":{"type":"string","minLength":1,"description":"The function of the script to call."},
  "timeout_s":{"type":"number","exclusiveMinimum":0,"default":30,"description":"Longest one call may take."},
  "interface":{"enum":["evalgraph","promptfoo"],"default":"evalgraph","description":"evalgraph: fn(**inputs, **with); promptfoo: get_assert(output, context)."}},
  "required":["file","function"],"additionalProperties":true})";

// Calls evalgraph._runtime.<name>(text) and returns its result (GIL held); throws with the Python error.
Ref call_runtime(const char *name, const std::string &text) {
  Ref fn(PyObject_GetAttrString(pynode::runtime_module(), name));
  Ref arg(fn ? PyUnicode_FromStringAndSize(text.data(), static_cast<Py_ssize_t>(text.size())) : nullptr);
  Ref r(arg ? PyObject_CallOneArg(fn.get(), arg.get()) : nullptr);
  if (!r) throw std::runtime_error(pynode::take_error());
  return r;
}

std::string str_of(PyObject *o) {
  const char *c = o != nullptr && PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : nullptr;
  if (c == nullptr) PyErr_Clear();
  return c != nullptr ? c : "";
}

class PythonNode {
 public:
  PythonNode(const eg_host *host, const std::string &params) : host_(host) {
    pynode::ensure_started();
    Gil gil;
    Ref r = call_runtime("prepare", params);
    // (function, fixed kwargs, {output: kinds} or None, interface, timeout_s, path, file as written,
    //  threshold or None, promptfoo config)
    if (!PyTuple_Check(r.get()) || PyTuple_GET_SIZE(r.get()) != 9) throw std::runtime_error("prepare() answered oddly");
    PyObject *t = r.get();
    fn_ = Ref(Py_NewRef(PyTuple_GET_ITEM(t, 0)));
    fixed_ = Ref(Py_NewRef(PyTuple_GET_ITEM(t, 1)));
    if (PyTuple_GET_ITEM(t, 2) != Py_None) {
      PyObject *k = nullptr, *v = nullptr;
      Py_ssize_t pos = 0;
      while (PyDict_Next(PyTuple_GET_ITEM(t, 2), &pos, &k, &v)) outputs_[str_of(k)] = static_cast<unsigned>(PyLong_AsLong(v));
    }
    promptfoo_ = str_of(PyTuple_GET_ITEM(t, 3)) == "promptfoo";
    timeout_s_ = PyFloat_AsDouble(PyTuple_GET_ITEM(t, 4));
    path_ = Ref(Py_NewRef(PyTuple_GET_ITEM(t, 5)));
    shown_ = Ref(Py_NewRef(PyTuple_GET_ITEM(t, 6)));
    threshold_ = Ref(Py_NewRef(PyTuple_GET_ITEM(t, 7)));
    config_ = Ref(Py_NewRef(PyTuple_GET_ITEM(t, 8)));
    format_error_ = Ref(PyObject_GetAttrString(pynode::runtime_module(), "format_error"));
    call_promptfoo_ = Ref(PyObject_GetAttrString(pynode::runtime_module(), "call_promptfoo"));
    if (!format_error_ || !call_promptfoo_) throw std::runtime_error(pynode::take_error());
  }

  ~PythonNode() {
    Gil gil;
    for (Ref *r : {&fn_, &fixed_, &path_, &shown_, &threshold_, &config_, &format_error_, &call_promptfoo_}) *r = Ref();
  }

  // One record: its ports as keyword arguments (promptfoo: output and context), the result checked against
  // the declaration. A failure is the record's: EG_ERROR with the exception, its script line, or what is wrong.
  eg_status process(eg_call *call, std::string_view input, std::string &out) {
    json in;
    std::string why;
    if (!evalgraph::parse_bounded(input, in, evalgraph::kMaxInputDepth, &why) || !in.is_object()) {
      out = "python: the input is " + (why.empty() ? std::string("not an object") : why);
      return EG_INVALID_INPUT;
    }
    Gil gil;
    pynode::CallScope scope(host_, call);
    Ref result;
    pynode::Deadline::Why fired = pynode::Deadline::none;
    try {
      if (promptfoo_) {
        Ref output, vars(PyDict_New());
        for (const auto &[k, v] : in.items()) {
          if (!k.empty() && k[0] == '_') continue;
          Ref val(pynode::to_python(v));
          if (k == "output") output = std::move(val);
          else PyDict_SetItemString(vars.get(), k.c_str(), val.get());
        }
        if (!output) output = Ref(Py_NewRef(Py_None));
        PyObject *args[] = {fn_.get(), output.get(), vars.get(), config_.get(), threshold_.get()};
        pynode::Deadline deadline(timeout_s_, host_, call);
        result = Ref(PyObject_Vectorcall(call_promptfoo_.get(), args, 5, nullptr));
        fired = deadline.end();
      } else {
        Ref kwargs(PyDict_Copy(fixed_.get()));
        for (const auto &[k, v] : in.items()) {
          if (!k.empty() && k[0] == '_') continue;
          Ref val(pynode::to_python(v));
          PyDict_SetItemString(kwargs.get(), k.c_str(), val.get());
        }
        pynode::Deadline deadline(timeout_s_, host_, call);
        result = Ref(PyObject_VectorcallDict(fn_.get(), nullptr, 0, kwargs.get()));
        fired = deadline.end();
      }
    } catch (const std::exception &e) {
      out = e.what();
      return EG_INVALID_INPUT;
    }
    if (!result) {
      out = exception_text(fired);
      return EG_ERROR;
    }
    try {
      out = check(result.get()).dump(-1, ' ', false, json::error_handler_t::replace);
    } catch (const std::exception &e) {
      out = e.what();
      return EG_ERROR;
    }
    return EG_OK;
  }

 private:
  // The pending exception as one line: its type, message and the script's file:line.
  std::string exception_text(pynode::Deadline::Why fired) {
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != nullptr && tb != nullptr) PyException_SetTraceback(value, tb);
    Ref t(type), v(value), b(tb);
    std::string note;
    if (fired == pynode::Deadline::timeout)
      note = "the call ran past timeout_s = " + json(timeout_s_).dump() + " s and was interrupted";
    else if (fired == pynode::Deadline::cancelled)
      note = "the run was stopped while the call ran";
    if (v && PyErr_GivenExceptionMatches(v.get(), pynode::timeout_type()) && !note.empty()) {
      Ref args(Py_BuildValue("(s)", note.c_str()));
      PyObject_SetAttrString(v.get(), "args", args.get());
    }
    if (v) {
      PyObject *a[] = {v.get(), path_.get(), shown_.get()};
      Ref s(PyObject_Vectorcall(format_error_.get(), a, 3, nullptr));
      if (s) return str_of(s.get());
    }
    PyErr_Restore(t.release(), v.release(), b.release());
    return pynode::take_error();
  }

  // The function's result as the node's output: a dict with exactly the declared outputs, of their types.
  json check(PyObject *r) {
    if (promptfoo_) return pynode::to_json(r, "result");
    if (!PyDict_Check(r))
      throw std::runtime_error(std::string("the function returned ") + Py_TYPE(r)->tp_name +
                               ", not a dict of its declared outputs (" + declared() + ")");
    json out = json::object();
    PyObject *k = nullptr, *v = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(r, &pos, &k, &v)) {
      std::string key = PyUnicode_Check(k) ? str_of(k) : std::string();
      auto it = outputs_.find(key);
      if (it == outputs_.end()) {
        Ref rep(PyObject_Repr(k));
        throw std::runtime_error("the function returned " + (rep ? str_of(rep.get()) : std::string("?")) +
                                 ", which is not a declared output (" + declared() +
                                 "); add it to @evalgraph.node(outputs=...)");
      }
      unsigned kind = pynode::kind_of(v);
      if ((kind & it->second) == 0)
        throw std::runtime_error("output '" + key + "' is declared " + pynode::kind_name(it->second) +
                                 " but the function returned " + (kind != 0 ? pynode::kind_name(kind) : Py_TYPE(v)->tp_name));
      out[key] = pynode::to_json(v, key);
    }
    if (out.size() != outputs_.size()) {
      std::string missing;
      for (const auto &[name, kinds] : outputs_)
        if (!out.contains(name)) missing += (missing.empty() ? "'" : ", '") + name + "'";
      throw std::runtime_error("the function did not return " + missing + " (declared outputs: " + declared() + ")");
    }
    return out;
  }

  std::string declared() const {
    std::string s;
    for (const auto &[name, kinds] : outputs_) s += (s.empty() ? "" : ", ") + name + ": " + pynode::kind_name(kinds);
    return s;
  }

  const eg_host *host_;
  Ref fn_, fixed_, path_, shown_, threshold_, config_, format_error_, call_promptfoo_;
  std::map<std::string, unsigned> outputs_;
  bool promptfoo_ = false;
  double timeout_s_ = 30;
};

// ---- the C ABI ----
eg_status py_create(const eg_host *host, const char *params, void **inst, eg_buffer *err) {
  return evalgraph::detail::guard(err, [&] {
    std::string text = params != nullptr ? params : "{}";
    try {
      *inst = new PythonNode(host, text);
    } catch (const std::exception &e) {
      throw std::runtime_error(std::string("python: ") + e.what());
    }
    return EG_OK;
  });
}

void py_destroy(void *inst) { delete static_cast<PythonNode *>(inst); }

eg_status py_process(void *inst, eg_call *call, const char *in, size_t len, eg_buffer *out) {
  return evalgraph::detail::guard(out, [&] {
    std::string text;
    eg_status st = static_cast<PythonNode *>(inst)->process(call, std::string_view(in, len), text);
    evalgraph::detail::fill_buffer(out, std::move(text));
    return st;
  });
}

// What the node reads, writes and takes, from its script. EG_THREAD_SAFE always (calls share the GIL);
// EG_FLAG_USES_LLM when the function is declared calls_llm=True.
eg_status py_describe(const char *params, size_t len, eg_buffer *out) {
  return evalgraph::detail::guard(out, [&] {
    std::string answer;
    try {
      pynode::ensure_started();
      Gil gil;
      Ref r = call_runtime("describe", std::string(params, len));
      answer = str_of(r.get());
    } catch (const std::exception &e) {
      evalgraph::detail::fill_buffer(out, json{{"errors", {{{"param", ""}, {"message", std::string("python: ") + e.what()}}}}}.dump());
      return EG_INVALID_INPUT;
    }
    json d = json::parse(answer);
    if (d.contains("errors")) {
      evalgraph::detail::fill_buffer(out, std::move(answer));
      return EG_INVALID_INPUT;
    }
    d["flags"] = static_cast<unsigned>(EG_FLAG_THREAD_SAFE) | (d.value("calls_llm", false) ? static_cast<unsigned>(EG_FLAG_USES_LLM) : 0u);
    d.erase("calls_llm");
    evalgraph::detail::fill_buffer(out, d.dump());
    return EG_OK;
  });
}

eg_node_type python_type() {
  static const char *const writes[] = {"*", nullptr};
  eg_node_type t{};
  t.struct_size = sizeof(eg_node_type);
  t.kind = EG_KIND_OPERATOR;
  t.name = "python";
  t.description = "a check written as a Python function (file, function; outputs declared in the script)";
  t.params_schema = kSchema;
  t.writes = writes;
  t.flags = EG_FLAG_THREAD_SAFE;
  t.create = &py_create;
  t.destroy = &py_destroy;
  t.process = &py_process;
  t.describe = &py_describe;
  return t;
}

}  // namespace

EVALGRAPH_PLUGIN("python", "0.1.0", "Checks in Python: an embedded CPython runs a script's function per record",
                 python_type())
