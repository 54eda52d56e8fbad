// DeviceExecutor: one job at a time on a device, small jobs on the submitting
// thread when the device is free, a bounded queue, cancellation pushed through
// a CancelToken, and jobs that throw leaving the device free.
#include "server/device/device_executor.h"

#include <atomic>
#include <chrono>
#include <future>
#include <new>
#include <stdexcept>
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
            nullptr, small);
        EXPECT_TRUE(s.ok()) << s;
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(ran.load(), 8 * 200);
  EXPECT_EQ(ex.queue_depth(), 0u);
}

TEST(DeviceExecutorTest, SmallJobsRunOnTheCallerWhenTheDeviceIsFreeAndOthersOnTheWorker) {
  DeviceExecutor ex(8, 1);
  std::thread::id small_ran_on, big_ran_on, small_while_busy_ran_on;
  ASSERT_TRUE(ex.RunSync([&] { small_ran_on = std::this_thread::get_id(); }, nullptr, true).ok());
  ASSERT_TRUE(ex.RunSync([&] { big_ran_on = std::this_thread::get_id(); }, nullptr, false).ok());
  EXPECT_EQ(small_ran_on, std::this_thread::get_id());
  EXPECT_NE(big_ran_on, std::this_thread::get_id());

  Blocker blocker(ex);  // a small job finding the device busy waits in the queue, not on its caller
  auto waiting = std::async(std::launch::async, [&] {
    return ex.RunSync([&] { small_while_busy_ran_on = std::this_thread::get_id(); }, nullptr, true);
  });
  WaitForDepth(ex, 1);
  blocker.Release();
  EXPECT_TRUE(blocker.Wait().ok());
  EXPECT_TRUE(waiting.get().ok());
  EXPECT_EQ(small_while_busy_ran_on, big_ran_on);
}

TEST(DeviceExecutorTest, ASmallJobQueuedBehindASmallJobRunsOnThatJobsThread) {
  DeviceExecutor ex(8, 1);
  std::thread::id first_ran_on, second_ran_on;
  std::promise<void> second_queued;
  auto first = std::async(std::launch::async, [&] {
    return ex.RunSync([&] {
      first_ran_on = std::this_thread::get_id();
      second_queued.get_future().wait();  // hold the device until the second job waits
    }, nullptr, true);
  });
  for (int i = 0; i < 5000 && first_ran_on == std::thread::id(); ++i) std::this_thread::sleep_for(1ms);
  auto second = std::async(std::launch::async, [&] {
    return ex.RunSync([&] { second_ran_on = std::this_thread::get_id(); }, nullptr, true);
  });
  WaitForDepth(ex, 1);
  second_queued.set_value();
  EXPECT_TRUE(first.get().ok());
  EXPECT_TRUE(second.get().ok());
  EXPECT_EQ(second_ran_on, first_ran_on);  // no hand-off to the worker
}

TEST(DeviceExecutorTest, JobsBeyondTheBoundAreRefusedAtOnce) {
  DeviceExecutor ex(/*max_queue=*/2, 1);
  Blocker blocker(ex);
  auto queued_big = std::async(std::launch::async, [&] { return ex.RunSync([] {}); });
  auto queued_small = std::async(std::launch::async, [&] { return ex.RunSync([] {}, nullptr, true); });
  WaitForDepth(ex, 2);
  bool ran = false;
  for (bool small : {false, true}) {
    absl::Status refused = ex.RunSync([&] { ran = true; }, nullptr, small);
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << "small=" << small;
    EXPECT_THAT(std::string(refused.message()), HasSubstr("queue is full (2 runs waiting)"));
  }
  EXPECT_FALSE(ran);
  blocker.Release();
  EXPECT_TRUE(blocker.Wait().ok());
  EXPECT_TRUE(queued_big.get().ok());
  EXPECT_TRUE(queued_small.get().ok());
  EXPECT_EQ(ex.queue_depth(), 0u);
}

TEST(DeviceExecutorTest, AQueuedJobWhoseTokenFiresIsDroppedAtOnceWithoutRunning) {
  for (bool small : {false, true}) {
    DeviceExecutor ex(8, 1);
    Blocker blocker(ex);
    auto cancel = std::make_shared<CancelToken>();
    bool ran = false;
    auto waiter = std::async(std::launch::async, [&] { return ex.RunSync([&] { ran = true; }, cancel, small); });
    WaitForDepth(ex, 1);
    cancel->Cancel(absl::DeadlineExceededError("deadline passed"));
    absl::Status s = waiter.get();  // returns while the device is still held: nothing polled
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << "small=" << small;
    EXPECT_EQ(s.message(), "deadline passed");
    EXPECT_EQ(ex.queue_depth(), 0u);
    blocker.Release();
    EXPECT_TRUE(blocker.Wait().ok());
    EXPECT_FALSE(ran) << "small=" << small;
  }
}

TEST(DeviceExecutorTest, AJobWhoseTokenFiredBeforeSubmissionNeverRuns) {
  DeviceExecutor ex(8, 1);
  auto cancel = std::make_shared<CancelToken>();
  cancel->Cancel(absl::CancelledError("client went away"));
  bool ran = false;
  EXPECT_EQ(ex.RunSync([&] { ran = true; }, cancel).code(), absl::StatusCode::kCancelled);
  EXPECT_FALSE(ran);
}

TEST(DeviceExecutorTest, ARunningJobSeesItsTokenFire) {
  DeviceExecutor ex(8, 1);
  auto cancel = std::make_shared<CancelToken>();
  std::atomic<bool> saw_cancel{false};
  auto run = std::async(std::launch::async, [&] {
    return ex.RunSync([&] {
      std::thread([cancel] { cancel->Cancel(absl::CancelledError("stop")); }).detach();
      for (int i = 0; i < 10000 && !cancel->flag()->load(); ++i) std::this_thread::sleep_for(1ms);
      saw_cancel = cancel->flag()->load();
    }, cancel);
  });
  EXPECT_TRUE(run.get().ok());  // the job itself decides what a stop means; it ran
  EXPECT_TRUE(saw_cancel.load());
  EXPECT_TRUE(ex.RunSync([] {}).ok());
}

TEST(DeviceExecutorTest, AJobThatThrowsFailsAloneAndTheDeviceIsFreeAgain) {
  for (bool small : {false, true}) {
    DeviceExecutor ex(8, 1);
    absl::Status bad = ex.RunSync([] { throw std::runtime_error("kernel bug"); }, nullptr, small);
    EXPECT_EQ(bad.code(), absl::StatusCode::kInternal) << "small=" << small;
    EXPECT_THAT(std::string(bad.message()), HasSubstr("kernel bug"));
    absl::Status oom = ex.RunSync([] { throw std::bad_alloc(); }, nullptr, small);
    EXPECT_EQ(oom.code(), absl::StatusCode::kResourceExhausted) << "small=" << small;
    EXPECT_EQ(ex.held_for(), std::chrono::nanoseconds(0));
    bool ran = false;
    EXPECT_TRUE(ex.RunSync([&] { ran = true; }, nullptr, !small).ok());
    EXPECT_TRUE(ran);
  }
}

TEST(DeviceExecutorTest, HeldForCountsWhileAJobHoldsTheDevice) {
  DeviceExecutor ex(8, 1);
  EXPECT_EQ(ex.held_for(), std::chrono::nanoseconds(0));
  Blocker blocker(ex);
  std::this_thread::sleep_for(20ms);
  EXPECT_GE(ex.held_for(), std::chrono::milliseconds(20));
  blocker.Release();
  EXPECT_TRUE(blocker.Wait().ok());
  EXPECT_EQ(ex.held_for(), std::chrono::nanoseconds(0));
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

TEST(CancelTokenTest, TheFirstReasonWinsAndTheHookRunsOnce) {
  CancelToken t;
  int hooks = 0;
  ASSERT_TRUE(t.SetHook([&] { ++hooks; }));
  EXPECT_FALSE(t.cancelled());
  EXPECT_TRUE(t.reason().ok());
  t.Cancel(absl::DeadlineExceededError("first"));
  t.Cancel(absl::CancelledError("second"));
  EXPECT_TRUE(t.cancelled());
  EXPECT_TRUE(t.flag()->load());
  EXPECT_EQ(t.reason(), absl::DeadlineExceededError("first"));
  EXPECT_EQ(hooks, 1);
  EXPECT_FALSE(t.SetHook([&] { ++hooks; }));  // too late: the caller handles it
  EXPECT_EQ(hooks, 1);
}

TEST(CancelTokenTest, ClearHookWaitsForARunningHook) {
  CancelToken t;
  std::promise<void> entered, leave;
  std::atomic<bool> hook_done{false};
  ASSERT_TRUE(t.SetHook([&] {
    entered.set_value();
    leave.get_future().wait();
    hook_done = true;
  }));
  std::thread canceller([&] { t.Cancel(absl::CancelledError("x")); });
  entered.get_future().wait();
  auto cleared = std::async(std::launch::async, [&] { t.ClearHook(); return hook_done.load(); });
  EXPECT_EQ(cleared.wait_for(50ms), std::future_status::timeout);
  leave.set_value();
  EXPECT_TRUE(cleared.get());
  canceller.join();
}

}  // namespace
}  // namespace npu::device
