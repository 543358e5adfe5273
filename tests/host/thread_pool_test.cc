// The thread pool (host/thread_pool.h): every index runs exactly once, whatever the thread count,
// and the caller's side work runs alongside without losing chunks or swallowing its errors.
#include "host/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace s2r {
namespace {

TEST(ThreadPool, EveryIndexRunsOnceWithSideWork) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int n : {0, 1, 7, 100, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      int side_runs = 0;
      pool.ParallelFor(
          n,
          [&](int begin, int end, int t) {
            ASSERT_GE(t, 0);
            ASSERT_LT(t, threads);
            for (int i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
          },
          [&] { ++side_runs; });
      EXPECT_EQ(side_runs, 1) << threads << " threads, n " << n;
      for (int i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i;
    }
  }
}

TEST(ThreadPool, SideErrorIsRethrownAfterEveryChunkRan) {
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    std::atomic<int> count{0};
    EXPECT_THROW(pool.ParallelFor(
                     500, [&](int begin, int end, int) { count.fetch_add(end - begin); },
                     [] { throw std::runtime_error("disk full"); }),
                 std::runtime_error);
    EXPECT_EQ(count.load(), 500) << threads << " threads";
    // the pool is still usable
    count = 0;
    pool.ParallelFor(64, [&](int begin, int end, int) { count.fetch_add(end - begin); });
    EXPECT_EQ(count.load(), 64);
  }
}

}  // namespace
}  // namespace s2r
