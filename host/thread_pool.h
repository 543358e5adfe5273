// A fixed set of worker threads that run one function over [0, n) in chunks handed out on demand
// (worlds differ in cost -- one is grasping, its neighbour moves in free space -- and a static
// partition would leave a thread idle at every control step's barrier). Which thread steps a world
// depends on timing, the result does not: worlds are independent, each is stepped by exactly one
// thread, and a thread's scratch carries nothing from one world to the next.
#pragma once

#include <atomic>
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
  // fn(begin, end, thread_index) over contiguous chunks, several per thread; returns when all
  // chunks are done. `side` (optional) is other work of the caller that may run alongside: the
  // calling thread runs it first and then joins the chunks, which the other threads have been
  // taking meanwhile, so it costs the pass no barrier. If `side` throws, the chunks still all run,
  // and then the exception is rethrown.
  void ParallelFor(int n, const std::function<void(int, int, int)>& fn, const std::function<void()>& side = {});

 private:
  void Worker(int index);
  void RunChunks(const std::function<void(int, int, int)>& fn, int n, int index);

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int, int, int)>* job_ = nullptr;
  int job_n_ = 0;
  int chunk_ = 1;
  std::atomic<int> next_{0};
  std::atomic<long> generation_{0};
  std::atomic<int> pending_{0};
  bool stop_ = false;
};

}  // namespace s2r
