// A fixed set of worker threads that run one function over a static partition of [0, n).
// Static partition: worker t always gets the same contiguous block, so which thread steps a world
// never depends on timing (results are bitwise identical at any thread count anyway: worlds are
// independent and each is stepped by exactly one thread).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace s2r {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }
  // fn(begin, end, thread_index) over contiguous blocks; returns when all blocks are done
  void ParallelFor(int n, const std::function<void(int, int, int)>& fn);

 private:
  void Worker(int index);

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int, int, int)>* job_ = nullptr;
  int job_n_ = 0;
  long generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace s2r
