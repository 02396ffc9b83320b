// python — a check written as a Python function, run in-process by an embedded CPython (interpreter.h).
// The script declares the node's outputs (and its parameters, by the function's signature); describe() tells
// the engine so before any record moves (evalgraph/_runtime.py does the reading). docs/python.md.
#include <evalgraph/plugin.hpp>

#include <cstdint>
#include <map>
#include <vector>

#include "async_host.h"
#include "interpreter.h"
#include "output_limit.h"

namespace {

using evalgraph::json;
using pynode::Gil;
using pynode::Ref;

// The type's own parameters; the function's own (its signature) are the node's too, and a node's full schema
// comes from its script (describe). evalgraph/_runtime.py reads them all from `with:` as the node got it.
struct PythonConfig {
  std::string file, function;
  double timeout_s = 30;
  std::string interface = "evalgraph";
};
const evalgraph::Params<PythonConfig> kParams{
    evalgraph::other_keys_allowed,
    {
        evalgraph::param(&PythonConfig::file, "file", "The script, relative to the pipeline.")
            .min_length(1)
            .make_required(),
        evalgraph::param(&PythonConfig::function, "function", "The function of the script to call.")
            .min_length(1)
            .make_required(),
        evalgraph::param(&PythonConfig::timeout_s, "timeout_s", "Longest one call may take.").above(0),
        evalgraph::param(&PythonConfig::interface, "interface",
                         "evalgraph: fn(**inputs, **with); promptfoo: get_assert(output, context).")
            .one_of({"evalgraph", "promptfoo"}),
    }};

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

// A record's fields as Python values, the arguments of its call, and the names of fields the general path
// parsed: per thread, kept from one record to the next (no allocation per record).
thread_local std::vector<pynode::Field> t_fields;
thread_local std::vector<PyObject *> t_args;
thread_local std::vector<std::string> t_names;

class PythonNode : public evalgraph::RawNode {
 public:
  // The engine hands `with:` as compact JSON with its keys sorted, which parse and dump give back unchanged.
  PythonNode(const evalgraph::Host &host, const PythonConfig &, const json &params) try : host_(host.raw()) {
    pynode::ensure_started();
    record_bytes_ = record_bytes_limit(params);
    Gil gil;
    pynode::install_async_module();
    Ref r = call_runtime("prepare", params.dump());
    // evalgraph._runtime.Prepared, read by its field names
    auto field = [&r](const char *name) {
      Ref v(PyObject_GetAttrString(r.get(), name));
      if (!v) throw std::runtime_error(std::string("prepare() answered without ") + name + ": " + pynode::take_error());
      return v;
    };
    fn_ = field("function");
    fixed_ = field("fixed");
    if (Ref kinds = field("output_kinds"); kinds.get() != Py_None) {
      PyObject *k = nullptr, *v = nullptr;
      Py_ssize_t pos = 0;
      while (PyDict_Next(kinds.get(), &pos, &k, &v)) outputs_[str_of(k)] = static_cast<unsigned>(PyLong_AsLong(v));
    }
    promptfoo_ = str_of(field("interface").get()) == "promptfoo";
    timeout_s_ = PyFloat_AsDouble(field("timeout_s").get());
    path_ = field("path");
    shown_ = field("shown");
    threshold_ = field("threshold");
    config_ = field("promptfoo_config");
    format_error_ = Ref(PyObject_GetAttrString(pynode::runtime_module(), "format_error"));
    call_promptfoo_ = Ref(PyObject_GetAttrString(pynode::runtime_module(), "call_promptfoo"));
    if (!format_error_ || !call_promptfoo_) throw std::runtime_error(pynode::take_error());
    for (const auto &[name, kinds] : outputs_) {
      PyObject *k = PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
      if (k == nullptr) throw std::runtime_error(pynode::take_error());
      PyUnicode_InternInPlace(&k);
      output_keys_.emplace_back(k);
      output_kinds_.push_back(kinds);
      std::string prefix;
      pynode::append_json_string(prefix, name.data(), name.size());
      output_prefix_.push_back(prefix + ":");
    }
    PyObject *k = nullptr, *v = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(fixed_.get(), &pos, &k, &v)) {
      PyObject *name = Py_NewRef(k);
      PyUnicode_InternInPlace(&name);
      fixed_names_.emplace_back(name);
      fixed_values_.push_back(v);
    }
  } catch (const std::exception &e) {
    throw std::runtime_error(std::string("python: ") + e.what());
  }

  ~PythonNode() override {
    Gil gil;
    for (Ref *r : {&fn_, &fixed_, &path_, &shown_, &threshold_, &config_, &format_error_, &call_promptfoo_, &kwnames_}) *r = Ref();
    output_keys_.clear();
    fixed_names_.clear();
  }

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    std::string out;
    const eg_status st = process(call.raw(), input, out);
    if (st == EG_INVALID_INPUT) throw evalgraph::InputError(out);
    if (st != EG_OK) throw std::runtime_error(out);
    return out;
  }

 private:
  // One record: its ports as keyword arguments (promptfoo: output and context), the result checked against
  // the declaration. A failure is the record's: EG_ERROR with the exception, its script line, or what is wrong.
  // The usual record takes the fast paths (pynode::parse_fields, append_json: no JSON tree either way, and a
  // vectorcall with the keyword names of the previous record); whatever they decline takes the general path
  // (nlohmann + to_python / to_json), which also words the errors.
  eg_status process(eg_call *call, std::string_view input, std::string &out) {
    std::vector<pynode::Field> &fields = t_fields;
    Gil gil;
    struct Drop {  // the field values are ours (GIL held: declared after gil, so released before it)
      ~Drop() {
        for (auto &f : t_fields) Py_XDECREF(f.value);
        t_fields.clear();
      }
    } drop;
    if (!pynode::parse_fields(input, evalgraph::kMaxInputDepth, fields)) {
      eg_status st = general_fields(input, out);
      if (st != EG_OK) return st;
    }
    pynode::CallScope scope(host_, call);
    pynode::AsyncScope async_scope(host_, call);  // evalgraph.achat's requests are this record's
    Ref result;
    pynode::Deadline::Why fired = pynode::Deadline::none;
    if (promptfoo_) {
      Ref output, vars(PyDict_New());
      for (auto &f : fields) {
        if (f.name == "output") {
          output = Ref(f.value);
          f.value = nullptr;
        } else if (!set_item(vars.get(), f)) {
          out = pynode::take_error();
          return EG_INVALID_INPUT;
        }
      }
      if (!output) output = Ref(Py_NewRef(Py_None));
      PyObject *a[] = {fn_.get(), output.get(), vars.get(), config_.get(), threshold_.get()};
      pynode::Deadline deadline(timeout_s_, host_, call);
      result = Ref(PyObject_Vectorcall(call_promptfoo_.get(), a, 5, nullptr));
      fired = deadline.end();
    } else if (Ref kwnames = keyword_names(); kwnames) {
      std::vector<PyObject *> &args = t_args;
      args.assign(fixed_values_.begin(), fixed_values_.end());
      for (const auto &f : fields) args.push_back(f.value);
      pynode::Deadline deadline(timeout_s_, host_, call);
      result = Ref(PyObject_Vectorcall(fn_.get(), args.data(), 0, kwnames.get()));
      fired = deadline.end();
    } else {  // an input repeats a `with:` key (possible with **kwargs): the input's value wins, as in a dict
      Ref kwargs(PyDict_Copy(fixed_.get()));
      for (const auto &f : fields) {
        if (!set_item(kwargs.get(), f)) {
          out = pynode::take_error();
          return EG_INVALID_INPUT;
        }
      }
      pynode::Deadline deadline(timeout_s_, host_, call);
      result = Ref(PyObject_VectorcallDict(fn_.get(), nullptr, 0, kwargs.get()));
      fired = deadline.end();
    }
    if (!result) {
      out = exception_text(fired);
      return EG_ERROR;
    }
    // Held to limits.record_bytes before converting (a lower bound, counted without converting), and after.
    out = pynode::record_bytes_error(pynode::json_bytes_at_least(result.get(), record_bytes_), record_bytes_, true);
    if (!out.empty()) return EG_ERROR;
    if (!fast_result(result.get(), out)) {
      try {
        out = check(result.get()).dump(-1, ' ', false, json::error_handler_t::replace);
      } catch (const std::exception &e) {
        out = e.what();
        return EG_ERROR;
      }
    }
    if (out.size() > record_bytes_) {
      out = pynode::record_bytes_error(out.size(), record_bytes_, false);
      return EG_ERROR;
    }
    return EG_OK;
  }

  // limits.record_bytes, as the engine hands it (_limits); none when it does not.
  static size_t record_bytes_limit(const json &params) {
    const auto lim = params.find("_limits");
    if (lim == params.end() || !lim->is_object()) return SIZE_MAX;
    const auto rb = lim->find("record_bytes");
    return rb != lim->end() && rb->is_number_unsigned() ? rb->get<size_t>() : SIZE_MAX;
  }

  // The input the fast parser declined: parsed by nlohmann (its words for what is wrong) and converted.
  eg_status general_fields(std::string_view input, std::string &out) {
    json in;
    std::string why;
    if (!evalgraph::parse_bounded(input, in, evalgraph::kMaxInputDepth, &why) || !in.is_object()) {
      out = "python: the input is " + (why.empty() ? std::string("not an object") : why);
      return EG_INVALID_INPUT;
    }
    std::vector<std::string> &names = t_names;  // the fields' names point here until the next record
    names.clear();
    names.reserve(in.size());
    std::vector<PyObject *> values;
    try {
      for (const auto &[k, v] : in.items()) {
        if (!k.empty() && k[0] == '_') continue;
        values.push_back(pynode::to_python(v));
        names.push_back(k);
      }
    } catch (const std::exception &e) {
      for (PyObject *v : values) Py_DECREF(v);
      out = e.what();
      return EG_INVALID_INPUT;
    }
    t_fields.clear();
    for (size_t i = 0; i < values.size(); ++i) t_fields.push_back({names[i], values[i]});
    return EG_OK;
  }

  static bool set_item(PyObject *dict, const pynode::Field &f) {
    Ref key(PyUnicode_DecodeUTF8(f.name.data(), static_cast<Py_ssize_t>(f.name.size()), nullptr));
    return key && PyDict_SetItem(dict, key.get(), f.value) == 0;
  }

  // The keyword names of a call: the `with:` keys, then the record's fields, as a tuple kept from one record
  // to the next (the same fields each time, as a rule). A new reference; none when a field repeats a `with:`
  // key (the caller then calls with a dict). (GIL held: the cache is shared by the engine's threads.)
  Ref keyword_names() {
    const auto &fields = t_fields;
    bool same = kwnames_ && !kw_repeats_ && kw_fields_.size() == fields.size();
    for (size_t i = 0; same && i < fields.size(); ++i) same = kw_fields_[i] == fields[i].name;
    if (!same) {
      kw_fields_.clear();
      kw_repeats_ = false;
      kwnames_ = Ref(PyTuple_New(static_cast<Py_ssize_t>(fixed_names_.size() + fields.size())));
      if (!kwnames_) {
        PyErr_Clear();
        return Ref();
      }
      Py_ssize_t i = 0;
      for (const Ref &n : fixed_names_) PyTuple_SET_ITEM(kwnames_.get(), i++, Py_NewRef(n.get()));
      for (const auto &f : fields) {
        PyObject *n = PyUnicode_DecodeUTF8(f.name.data(), static_cast<Py_ssize_t>(f.name.size()), nullptr);
        if (n == nullptr) {
          PyErr_Clear();
          kwnames_ = Ref();
          return Ref();
        }
        PyUnicode_InternInPlace(&n);
        for (const Ref &fixed : fixed_names_)
          if (PyUnicode_Compare(fixed.get(), n) == 0) kw_repeats_ = true;
        PyTuple_SET_ITEM(kwnames_.get(), i++, n);
        kw_fields_.emplace_back(f.name);
      }
    }
    if (kw_repeats_) return Ref();
    return Ref(Py_NewRef(kwnames_.get()));  // held for the call: another thread may replace kwnames_ meanwhile
  }

  // The result as the node's output, written straight from the Python values when it is what the
  // declaration says (false otherwise: check() then says what is wrong).
  bool fast_result(PyObject *r, std::string &out) {
    if (promptfoo_) return pynode::append_json(r, out);
    if (!PyDict_Check(r) || PyDict_GET_SIZE(r) != static_cast<Py_ssize_t>(output_keys_.size())) return false;
    out += '{';
    for (size_t i = 0; i < output_keys_.size(); ++i) {  // the declared names in std::map's order, as dump() writes
      PyObject *v = PyDict_GetItemWithError(r, output_keys_[i].get());
      if (v == nullptr) {
        PyErr_Clear();
        return false;
      }
      if ((pynode::kind_of(v) & output_kinds_[i]) == 0) return false;
      if (i > 0) out += ',';
      out += output_prefix_[i];
      if (!pynode::append_json(v, out)) return false;
    }
    out += '}';
    return true;
  }

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
  // The fast paths' view of the declaration and the `with:` keys (set in the constructor).
  std::vector<Ref> output_keys_;            // the declared names as str, in outputs_'s order
  std::vector<unsigned> output_kinds_;      // their kinds
  std::vector<std::string> output_prefix_;  // "\"name\":"
  std::vector<Ref> fixed_names_;            // the `with:` keyword names (interned)
  std::vector<PyObject *> fixed_values_;    // and their values (borrowed from fixed_)
  // The keyword names of the last call (GIL held): the record's field names, the tuple, whether one repeats
  // a `with:` key.
  std::vector<std::string> kw_fields_;
  Ref kwnames_;
  bool kw_repeats_ = false;
  bool promptfoo_ = false;
  double timeout_s_ = 30;
  size_t record_bytes_ = SIZE_MAX;  // limits.record_bytes: a result over it fails its record
};

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

const evalgraph::NodeSpec kSpec{
    .name = "python",
    .description = "a check written as a Python function (file, function; outputs declared in the script)",
    .writes = {"*"},
    .flags = EG_FLAG_THREAD_SAFE,
    .params = kParams,
    .describe = &py_describe};

}  // namespace

EVALGRAPH_PLUGIN("python", "Checks in Python: an embedded CPython runs a script's function per record",
                 evalgraph::node_type<PythonNode>(kSpec))
