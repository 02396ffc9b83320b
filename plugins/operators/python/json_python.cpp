// JSON <-> Python values for the python node (interpreter.h): to_python / to_json over a JSON tree, and the fast
// paths that read a record's text straight into Python values and write Python values straight as JSON text.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <evalgraph/json_scan.hpp>
#include <evalgraph/utf8.hpp>
#include <nlohmann/detail/conversions/to_chars.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "interpreter.h"

namespace pynode {

// ---- the fast paths: JSON text <-> Python values without a JSON tree in between ----
namespace {

// A JSON number as a new Python object: an int when it has no fraction or exponent (up to 18 digits: more may
// not fit int64, and nlohmann then makes it unsigned or a float), else a float parsed as strtod does (correctly
// rounded); nullptr for the others (the general path decides). build = false checks it and answers None.
PyObject *number(std::string_view text, bool build) {
  const bool is_float = text.find_first_of(".eE") != std::string_view::npos;
  if (is_float) {
    double d = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec != std::errc() || ptr != text.data() + text.size()) return nullptr;  // out of range: the general path
    return build ? PyFloat_FromDouble(d) : Py_NewRef(Py_None);
  }
  const bool negative = text[0] == '-';
  const std::string_view digits = text.substr(negative ? 1 : 0);
  if (digits.size() > 18) return nullptr;
  long long v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  if (negative) v = -v;
  return build ? PyLong_FromLongLong(v) : Py_NewRef(Py_None);
}

// A handler of the SDK's JSON scanner (evalgraph/json_scan.hpp, which validates the text and its UTF-8) that
// reads a record object's members straight into Python values: the top-level members into `fields`, their
// values built with a stack of open containers of its own. Members whose key starts with '_' (the engine's own,
// _meta) are checked, not converted. It stops (the general path then reads the record) on what it does not
// convert: an escaped or repeated top-level key, nesting deeper than max_depth, a number that fits neither
// int64 nor a double.
class FieldReader : public evalgraph::json_scan::Handler {
 public:
  FieldReader(std::string_view text, int max_depth, std::vector<Field> &fields)
      : text_(text), max_depth_(max_depth), fields_(fields) {}
  ~FieldReader() {
    for (Open &o : open_) {
      Py_XDECREF(o.container);
      Py_XDECREF(o.key);
    }
  }
  FieldReader(const FieldReader &) = delete;
  FieldReader &operator=(const FieldReader &) = delete;

  bool begin(bool object, std::size_t, std::size_t depth) {
    if (depth == 0) return object;
    if (static_cast<int>(depth) + 1 > max_depth_) return false;
    PyObject *c = !build_ ? Py_NewRef(Py_None) : object ? PyDict_New() : PyList_New(0);
    if (c == nullptr) return false;
    open_.push_back({c, nullptr});
    return true;
  }
  bool end(bool, std::size_t, std::size_t depth) {
    if (depth == 0) return true;
    PyObject *c = open_.back().container;
    Py_XDECREF(open_.back().key);
    open_.pop_back();
    return place(c, depth);
  }
  bool key(std::size_t off, std::size_t len, bool escaped, std::size_t depth) {
    const std::string_view raw = text_.substr(off + 1, len - 2);
    if (depth == 1) {
      if (escaped) return false;  // an escaped key: the general path
      name_ = raw;
      build_ = name_.empty() || name_[0] != '_';
      for (const auto &f : fields_)
        if (build_ && f.name == name_)
          return false;  // a repeated key: nlohmann keeps the last, a call would refuse both
      return true;
    }
    if (!build_) return true;
    PyObject *k = str(raw, escaped);
    if (k == nullptr) return false;
    Py_XDECREF(open_.back().key);
    open_.back().key = k;
    return true;
  }
  bool scalar(evalgraph::json_scan::Kind kind, std::size_t off, std::size_t len, bool escaped, std::size_t depth) {
    using K = evalgraph::json_scan::Kind;
    if (depth == 0) return false;
    const std::string_view raw = text_.substr(off, len);
    PyObject *v = nullptr;
    switch (kind) {
      case K::string:
        v = build_ ? str(raw.substr(1, len - 2), escaped) : Py_NewRef(Py_None);
        break;
      case K::number:
        v = number(raw, build_);
        break;
      case K::true_value:
        v = Py_NewRef(build_ ? Py_True : Py_None);
        break;
      case K::false_value:
        v = Py_NewRef(build_ ? Py_False : Py_None);
        break;
      case K::null:
        v = Py_NewRef(Py_None);
        break;
    }
    return v != nullptr && place(v, depth);
  }

 private:
  struct Open {
    PyObject *container;  // a dict or a list (None while a skipped member is checked)
    PyObject *key;        // a dict's key whose value comes next
  };

  // A string's content (between its quotes) as a new str.
  PyObject *str(std::string_view content, bool escaped) {
    if (escaped) {
      scratch_.clear();
      evalgraph::json_scan::unescape(content, scratch_);
      content = scratch_;
    }
    return PyUnicode_DecodeUTF8(content.data(), static_cast<Py_ssize_t>(content.size()), nullptr);
  }

  // Puts the new value v (a reference this takes) where it belongs: the current top-level member, or the
  // innermost open container.
  bool place(PyObject *v, std::size_t depth) {
    Ref owned(v);
    if (depth == 1) {
      if (build_) fields_.push_back({name_, owned.release()});
      return true;
    }
    if (!build_) return true;
    Open &o = open_.back();
    if (PyList_Check(o.container)) return PyList_Append(o.container, v) == 0;
    return PyDict_SetItem(o.container, o.key, v) == 0;
  }

  std::string_view text_;
  int max_depth_;
  std::vector<Field> &fields_;
  std::vector<Open> open_;
  std::string_view name_;  // the current top-level member's key
  bool build_ = true;      // false while a member the node skips is checked
  std::string scratch_;
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

bool parse_fields(std::string_view text, int max_depth, std::vector<Field> &fields) {
  fields.clear();
  // Two levels short of the general path's bound: whatever is taken here, it takes too (its own count of
  // depth may start elsewhere); what is deeper goes there and gets its message.
  FieldReader reader(text, max_depth - 2, fields);
  if (evalgraph::json_scan::scan(text, reader).ok()) return true;
  for (auto &f : fields) Py_XDECREF(f.value);
  fields.clear();
  PyErr_Clear();
  return false;
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
