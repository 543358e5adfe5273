#include "host/thread_pool.h"

namespace s2r {

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
  // thread 0 is the caller; workers are 1..threads-1
  for (int t = 1; t < threads_; ++t) workers_.emplace_back(&ThreadPool::Worker, this, t);
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

static void Block(int n, int threads, int index, int* begin, int* end) {
  int base = n / threads, extra = n % threads;
  *begin = index * base + (index < extra ? index : extra);
  *end = *begin + base + (index < extra ? 1 : 0);
}

void ThreadPool::ParallelFor(int n, const std::function<void(int, int, int)>& fn) {
  if (threads_ == 1 || n <= 1) {
    fn(0, n, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    pending_ = threads_ - 1;
    ++generation_;
  }
  start_cv_.notify_all();
  int begin, end;
  Block(n, threads_, 0, &begin, &end);
  if (begin < end) fn(begin, end, 0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::Worker(int index) {
  long seen = 0;
  for (;;) {
    const std::function<void(int, int, int)>* job;
    int n;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      n = job_n_;
    }
    int begin, end;
    Block(n, threads_, index, &begin, &end);
    if (begin < end) (*job)(begin, end, index);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

}  // namespace s2r
