#pragma once
// A small pool that runs the iterations of a loop concurrently. The executor uses it for thread-safe nodes
// that call an LLM: their records spend most of their time waiting for answers, so a chunk's records are
// processed side by side (the LLM service still caps each provider's requests in flight), while the -j
// workers stay the measure of CPU parallelism.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace evalgraph {

class FanOut {
 public:
  explicit FanOut(int threads);
  ~FanOut();
  FanOut(const FanOut &) = delete;
  FanOut &operator=(const FanOut &) = delete;

  // Runs f(0) … f(n-1) on the pool and on the calling thread; returns when all have finished.
  // Several threads may call run() at once.
  void run(std::size_t n, const std::function<void(std::size_t)> &f);

 private:
  struct Job {
    const std::function<void(std::size_t)> *f;
    std::size_t n, next = 0, done = 0;
  };
  bool take(Job *&job, std::size_t &i);  // with mu_ held
  void loop();

  std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  std::deque<Job *> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace evalgraph
