// WorkPool: work that waits runs on threads of its own, as many at once as
// there is work up to the bound (none waits behind a busy thread while the
// pool may grow), beyond it in order; destruction runs what is queued.
#include "server/core/work_pool.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace npu::core {
namespace {

TEST(WorkPoolTest, WaitingWorkDoesNotHoldUpOtherWorkWhileThePoolMayGrow) {
  WorkPool pool(4);
  Mutex mu;
  CondVar cv;
  int started = 0;
  bool release = false;
  for (int i = 0; i < 4; ++i) {
    pool.Run([&] {
      MutexLock lock(&mu);
      ++started;
      cv.SignalAll();
      while (!release) cv.Wait(&mu);
    });
  }
  {
    // All four run at once: each waits for the others to have started.
    MutexLock lock(&mu);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started < 4 && std::chrono::steady_clock::now() < give_up) cv.WaitFor(&mu, std::chrono::milliseconds(50));
    EXPECT_EQ(started, 4);
    release = true;
  }
  cv.SignalAll();
}

TEST(WorkPoolTest, WorkBeyondTheBoundWaitsAndDestructionRunsWhatIsQueued) {
  std::atomic<int> done{0};
  {
    WorkPool pool(1);
    for (int i = 0; i < 50; ++i) {
      pool.Run([&done] {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        done.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(done.load(), 50);
}

}  // namespace
}  // namespace npu::core
