#include "host/thread_pool.h"

#include <chrono>
#include <exception>

namespace s2r {

namespace {
// how long a thread spins on a flag before it sleeps on the condition variable: a control step of
// a few hundred worlds takes about a millisecond, and a sleeping thread takes tens of microseconds
// to wake (more in a VM), which would cost a large part of it at every step's start and barrier.
// Bounded in time, so more threads than cores (or an idle pool) costs little.
constexpr auto kSpinTime = std::chrono::microseconds(50);

template <typename Ready>
bool Spin(Ready ready) {
  auto until = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= until) return ready();
  }
}
}  // namespace

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
  // thread 0 is the caller; workers are 1..threads-1
  for (int t = 1; t < threads_; ++t) workers_.emplace_back(&ThreadPool::Worker, this, t);
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunChunks(const std::function<void(int, int, int)>& fn, int n, int index) {
  for (;;) {
    int begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (begin >= n) return;
    fn(begin, begin + chunk_ < n ? begin + chunk_ : n, index);
  }
}

void ThreadPool::ParallelFor(int n, const std::function<void(int, int, int)>& fn, const std::function<void()>& side) {
  std::exception_ptr side_error;
  auto run_side = [&] {
    if (!side) return;
    try {
      side();
    } catch (...) {
      side_error = std::current_exception();
    }
  };
  if (threads_ == 1 || n <= 1) {
    run_side();
    fn(0, n, 0);
    if (side_error) std::rethrow_exception(side_error);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    // about 16 chunks per thread: enough to even out the worlds' costs, few enough atomics; a
    // multiple of 16 items when there are enough, so per-item 4-byte arrays (a world's status)
    // split between threads on cache-line boundaries
    chunk_ = n / (16 * threads_);
    if (chunk_ >= 16) chunk_ -= chunk_ % 16;
    else chunk_ = n >= 32 * threads_ ? 16 : (chunk_ > 1 ? chunk_ : 1);
    next_.store(0, std::memory_order_relaxed);
    pending_.store(threads_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_cv_.notify_all();
  run_side();
  RunChunks(fn, n, 0);
  if (!Spin([this] { return pending_.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = nullptr;
  }
  if (side_error) std::rethrow_exception(side_error);
}

void ThreadPool::Worker(int index) {
  long seen = 0;
  for (;;) {
    const std::function<void(int, int, int)>* job;
    int n;
    if (!Spin([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      seen = generation_.load(std::memory_order_relaxed);
      job = job_;
      n = job_n_;
    }
    RunChunks(*job, n, index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

}  // namespace s2r
