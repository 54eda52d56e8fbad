// DeviceExecutor: one job at a time on a device, small jobs on the caller's
// thread, a bounded number of waiters, and callers that give up while waiting.
#include "server/device/device_executor.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::device {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Holds the device with a worker job until Release(), so tests can make others wait.
class Blocker {
 public:
  explicit Blocker(DeviceExecutor& ex) {
    done_ = std::async(std::launch::async, [&ex, this] {
      return ex.RunSync([this] {
        started_.set_value();
        release_.get_future().wait();
      });
    });
    started_.get_future().wait();
  }
  void Release() { release_.set_value(); }
  absl::Status Wait() { return done_.get(); }

 private:
  std::promise<void> started_;
  std::promise<void> release_;
  std::future<absl::Status> done_;
};

void WaitForDepth(const DeviceExecutor& ex, size_t depth) {
  for (int i = 0; i < 5000 && ex.queue_depth() != depth; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(ex.queue_depth(), depth);
}

TEST(DeviceExecutorTest, JobsNeverOverlapWhetherSmallOrNot) {
  DeviceExecutor ex(/*max_queue=*/64, /*omp_threads=*/1);
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> ran{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const bool small = (i + t) % 3 != 0;
        absl::Status s = ex.RunSync(
            [&] {
              if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
              std::this_thread::yield();
              ran.fetch_add(1);
              inside.fetch_sub(1);
            },
            nullptr, nullptr, small);
        EXPECT_TRUE(s.ok()) << s;
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(ran.load(), 8 * 200);
  EXPECT_EQ(ex.queue_depth(), 0u);
}

TEST(DeviceExecutorTest, SmallJobsRunOnTheCallerAndOthersOnTheWorker) {
  DeviceExecutor ex(8, 1);
  std::thread::id small_ran_on, big_ran_on;
  ASSERT_TRUE(ex.RunSync([&] { small_ran_on = std::this_thread::get_id(); }, nullptr, nullptr, true).ok());
  ASSERT_TRUE(ex.RunSync([&] { big_ran_on = std::this_thread::get_id(); }, nullptr, nullptr, false).ok());
  EXPECT_EQ(small_ran_on, std::this_thread::get_id());
  EXPECT_NE(big_ran_on, std::this_thread::get_id());
}

TEST(DeviceExecutorTest, WaitersBeyondTheBoundAreRefusedAtOnce) {
  DeviceExecutor ex(/*max_queue=*/2, 1);
  Blocker blocker(ex);
  auto queued_big = std::async(std::launch::async, [&] { return ex.RunSync([] {}); });
  auto waiting_small = std::async(std::launch::async, [&] { return ex.RunSync([] {}, nullptr, nullptr, true); });
  WaitForDepth(ex, 2);
  bool ran = false;
  for (bool small : {false, true}) {
    absl::Status refused = ex.RunSync([&] { ran = true; }, nullptr, nullptr, small);
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << "small=" << small;
    EXPECT_THAT(std::string(refused.message()), HasSubstr("queue is full (2 runs waiting)"));
  }
  EXPECT_FALSE(ran);
  blocker.Release();
  EXPECT_TRUE(blocker.Wait().ok());
  EXPECT_TRUE(queued_big.get().ok());
  EXPECT_TRUE(waiting_small.get().ok());
  EXPECT_EQ(ex.queue_depth(), 0u);
}

TEST(DeviceExecutorTest, AWaitingCallerThatGivesUpIsDroppedWithoutRunning) {
  for (bool small : {false, true}) {
    DeviceExecutor ex(8, 1);
    Blocker blocker(ex);
    std::atomic<bool> give_up{false};
    bool ran = false;
    auto waiter = std::async(std::launch::async, [&] {
      return ex.RunSync(
          [&] { ran = true; },
          [&] { return give_up.load() ? absl::DeadlineExceededError("deadline passed") : absl::OkStatus(); }, nullptr,
          small);
    });
    WaitForDepth(ex, 1);
    give_up = true;
    absl::Status s = waiter.get();  // returns while the device is still held
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << "small=" << small;
    EXPECT_EQ(ex.queue_depth(), 0u);
    blocker.Release();
    EXPECT_TRUE(blocker.Wait().ok());
    EXPECT_FALSE(ran) << "small=" << small;
  }
}

TEST(DeviceExecutorTest, ARunningJobIsToldToStopWhenItsCallerGivesUp) {
  DeviceExecutor ex(8, 1);
  std::atomic<bool> cancel{false};
  std::atomic<bool> give_up{false};
  std::atomic<bool> saw_cancel{false};
  auto run = std::async(std::launch::async, [&] {
    return ex.RunSync(
        [&] {
          give_up = true;  // the caller gives up once the job has started
          for (int i = 0; i < 10000 && !cancel.load(); ++i) std::this_thread::sleep_for(1ms);
          saw_cancel = cancel.load();
        },
        [&] { return give_up.load() ? absl::CancelledError("client cancelled") : absl::OkStatus(); }, &cancel);
  });
  EXPECT_EQ(run.get().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(saw_cancel.load());
  // The device is free again.
  EXPECT_TRUE(ex.RunSync([] {}).ok());
}

TEST(DeviceExecutorTest, QueuedJobsFinishBeforeTheExecutorStops) {
  std::atomic<int> ran{0};
  std::vector<std::future<absl::Status>> runs;
  {
    DeviceExecutor ex(8, 1);
    Blocker blocker(ex);
    for (int i = 0; i < 3; ++i) {
      runs.push_back(std::async(std::launch::async, [&] { return ex.RunSync([&] { ran.fetch_add(1); }); }));
    }
    WaitForDepth(ex, 3);
    blocker.Release();
    EXPECT_TRUE(blocker.Wait().ok());
  }  // the destructor drains the queue, then joins
  for (auto& r : runs) EXPECT_TRUE(r.get().ok());
  EXPECT_EQ(ran.load(), 3);
}

}  // namespace
}  // namespace npu::device
