// The C++ side of `async def` checks (evalgraph.achat): the module _evalgraph_async, whose chat() a thread of
// the package's pool calls for the record a worker thread works on (evalgraph/_aio.py).
#pragma once

#include "evalgraph/plugin.h"

namespace pynode {

// Makes _evalgraph_async importable (put into sys.modules once). (GIL held.) Throws std::runtime_error.
void install_async_module();

// The record this worker thread works on, as _evalgraph_async.context() hands it to the pool: set for a call.
class AsyncScope {
 public:
  AsyncScope(const eg_host *host, eg_call *call);
  ~AsyncScope();
  AsyncScope(const AsyncScope &) = delete;
  AsyncScope &operator=(const AsyncScope &) = delete;
};

}  // namespace pynode
