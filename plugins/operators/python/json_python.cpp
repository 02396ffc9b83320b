// JSON <-> Python values for the python node (interpreter.h): to_python / to_json over a JSON tree, and the fast
// paths that read a record's text straight into Python values and write Python values straight as JSON text.
#include <evalgraph/utf8.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/detail/conversions/to_chars.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "interpreter.h"

namespace pynode {

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
