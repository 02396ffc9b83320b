#include "output_limit.h"

namespace pynode {
namespace {

// Deeper than this the count stops (what it has counted is still a lower bound; the conversion refuses what
// nests too deeply).
constexpr int kMaxCountDepth = 200;

std::size_t count(PyObject *o, std::size_t cap, std::size_t acc, int depth) {
  if (acc > cap || depth > kMaxCountDepth) return acc;
  switch (kind_of(o)) {
    case K_NULL:
      return acc + 4;
    case K_BOOL:
      return acc + (o == Py_True ? 4 : 5);
    case K_INT:
    case K_FLOAT:
      return acc + 1;
    case K_STR:
      return acc + 2 + static_cast<std::size_t>(PyUnicode_GET_LENGTH(o));
    case K_LIST: {
      PyObject **items = PySequence_Fast_ITEMS(o);  // a list or a tuple (kind_of)
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      acc += 2 + (n > 0 ? static_cast<std::size_t>(n - 1) : 0);
      for (Py_ssize_t i = 0; i < n && acc <= cap; ++i) acc = count(items[i], cap, acc, depth + 1);
      return acc;
    }
    case K_DICT: {
      PyObject *k = nullptr, *v = nullptr;
      Py_ssize_t pos = 0;
      acc += 2;
      while (acc <= cap && PyDict_Next(o, &pos, &k, &v)) {
        acc += pos > 1 ? 2 : 1;  // ':' and ',' between items
        acc = count(k, cap, acc, depth + 1);
        acc = count(v, cap, acc, depth + 1);
      }
      return acc;
    }
    default:
      return acc;  // not JSON: the conversion says so
  }
}

}  // namespace

std::size_t json_bytes_at_least(PyObject *o, std::size_t cap) { return count(o, cap, 0, 0); }

std::string record_bytes_error(std::size_t bytes, std::size_t limit, bool at_least) {
  if (bytes <= limit) return {};
  return "the function's result is " + std::string(at_least ? "at least " : "") + std::to_string(bytes) +
         " bytes as JSON, over limits.record_bytes (" + std::to_string(limit) +
         " bytes); the output was not kept. Return less (a summary, a count), or raise limits.record_bytes in "
         "the pipeline if outputs this large are expected";
}

}  // namespace pynode
