#include "exec/fan_out.h"

namespace evalgraph {

FanOut::FanOut(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

FanOut::~FanOut() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_work_.notify_all();
  for (auto &t : threads_) t.join();
}

bool FanOut::take(Job *&job, std::size_t &i) {
  while (!jobs_.empty()) {
    Job *j = jobs_.front();
    if (j->next < j->n) {
      job = j;
      i = j->next++;
      return true;
    }
    jobs_.pop_front();  // every iteration of it is handed out
  }
  return false;
}

void FanOut::loop() {
  std::unique_lock lk(mu_);
  for (;;) {
    Job *job = nullptr;
    std::size_t i = 0;
    cv_work_.wait(lk, [&] { return stop_ || take(job, i); });
    if (job == nullptr) return;
    lk.unlock();
    (*job->f)(i);
    lk.lock();
    if (++job->done == job->n) cv_done_.notify_all();
  }
}

void FanOut::run(std::size_t n, const std::function<void(std::size_t)> &f) {
  if (n == 0) return;
  Job job{&f, n};
  std::unique_lock lk(mu_);
  jobs_.push_back(&job);
  cv_work_.notify_all();
  // The caller works too, on its own job only.
  while (job.next < job.n) {
    std::size_t i = job.next++;
    lk.unlock();
    f(i);
    lk.lock();
    ++job.done;
  }
  cv_done_.wait(lk, [&] { return job.done == job.n; });
  // The job may still sit in the queue (fully handed out); drop it before it goes out of scope.
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
    if (*it == &job) {
      jobs_.erase(it);
      break;
    }
}

}  // namespace evalgraph
