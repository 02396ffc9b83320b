// What the files of the python node's interpreter share beyond interpreter.h; not for plugin.cpp.
#pragma once

#include "interpreter.h"

namespace pynode::detail {

// The _evalgraph_host module's init function (host_module.cpp), registered before the interpreter starts.
PyObject *init_host_module();
// The watchdog thread (watchdog.cpp), started once with the interpreter.
[[noreturn]] void watchdog();

}  // namespace pynode::detail
