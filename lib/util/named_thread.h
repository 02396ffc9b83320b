#pragma once
// A std::thread whose name (at most 15 characters) shows in top -H, perf and gdb.
#include <pthread.h>

#include <thread>
#include <utility>

namespace evalgraph {

template <class F>
std::thread named_thread(const char *name, F &&body) {
  return std::thread([name, body = std::forward<F>(body)]() mutable {
    pthread_setname_np(pthread_self(), name);
    body();
  });
}

}  // namespace evalgraph
