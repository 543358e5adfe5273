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

// Guided chunks: a thread takes a share of what is left (1 / (4 threads)), so the first chunks are
// long runs of neighbouring items and the last ones small, and the threads finish together (with
// fixed chunks of n / (16 threads), the thread that took the last chunk ran on for half a chunk on
// average while the others waited at the barrier: about 3 % of a control step). Chunks stay
// multiples of 16 items while they are that long, so per-item 4-byte arrays (a world's status)
// split between threads on cache-line boundaries; only the tail's few chunks are finer.
void ThreadPool::RunChunks(const std::function<void(int, int, int)>& fn, int n, int index) {
  int begin = next_.load(std::memory_order_relaxed);
  for (;;) {
    if (begin >= n) return;
    int chunk = (n - begin) / (4 * threads_);
    if (chunk >= 16) chunk -= chunk % 16;
    else chunk = chunk < chunk_ ? chunk_ : chunk;
    const int end = n - begin < chunk ? n : begin + chunk;
    if (next_.compare_exchange_weak(begin, end, std::memory_order_relaxed)) {
      fn(begin, end, index);
      begin = next_.load(std::memory_order_relaxed);
    }
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
    // the smallest chunk (RunChunks): one item, or 4 when there are many per thread (a little
    // false sharing of a cache line at the tail costs less than a thread idling at the barrier)
    chunk_ = n >= 64 * threads_ ? 4 : 1;
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
