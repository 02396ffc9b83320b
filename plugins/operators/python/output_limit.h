// A check's result held to limits.record_bytes before it is converted: a 200 MB str fails its record with a
// message, instead of becoming a 200 MB output line.
#pragma once

#include <cstddef>
#include <string>

#include "interpreter.h"

namespace pynode {

// A lower bound of the size of o's JSON text, counted without converting anything (a str counts its
// characters: its UTF-8 is at least as long); stops counting once it passes `cap`. (GIL held.)
std::size_t json_bytes_at_least(PyObject *o, std::size_t cap);

// The record's error when a result of (at least) `bytes` bytes is over limits.record_bytes (`limit`); "" when
// it is not.
std::string record_bytes_error(std::size_t bytes, std::size_t limit, bool at_least);

}  // namespace pynode
