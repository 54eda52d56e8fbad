// The dynamic batcher's rules (core/dynamic_batcher.h), on a runner that
// records each batch and finishes it only when the test says: preferred
// sizes go at once, a lone request waits max_queue_delay, requests of other
// shapes or devices are not merged, priority levels are served in order, a
// full queue is refused naming the limit, a request that times out is
// refused (REJECT) or served after the others (DELAY), a cancelled request
// leaves the queue without touching the others, and preserve_ordering holds
// answers back until the earlier ones went.
#include "server/core/dynamic_batcher.h"

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using std::chrono::milliseconds;

// What the batcher did, in order.
class Record {
 public:
  void Refused(const std::string& name, const absl::Status& why) {
    MutexLock lock(&mu_);
    refused_.push_back(name);
    reasons_.push_back(why);
    changed_.SignalAll();
  }
  void Answered(const std::string& name) {
    MutexLock lock(&mu_);
    answered_.push_back(name);
    changed_.SignalAll();
  }
  void Ran(std::vector<std::string> names, DynamicBatcher::BatchDone done) {
    MutexLock lock(&mu_);
    batches_.push_back(std::move(names));
    done_.push_back(std::move(done));
    changed_.SignalAll();
  }
  // Finishes batch `i` (once it ran): each of its requests answered.
  void Finish(size_t i) {
    DynamicBatcher::BatchDone done;
    std::vector<std::string> names;
    {
      MutexLock lock(&mu_);
      Await([&] { return batches_.size() > i; });
      done = std::move(done_.at(i));
      names = batches_.at(i);
    }
    std::vector<DynamicBatcher::Answer> answers;
    for (const std::string& n : names) answers.push_back([this, n] { Answered(n); });
    done(std::move(answers));
  }
  // Waits (at most 10 s) until `n` batches ran / `n` requests were refused or answered.
  std::vector<std::vector<std::string>> Batches(size_t n) {
    MutexLock lock(&mu_);
    Await([&] { return batches_.size() >= n; });
    return batches_;
  }
  std::vector<std::string> RefusedNames(size_t n) {
    MutexLock lock(&mu_);
    Await([&] { return refused_.size() >= n; });
    return refused_;
  }
  absl::Status Reason(size_t i) {
    MutexLock lock(&mu_);
    return reasons_.at(i);
  }
  std::vector<std::string> AnsweredNames(size_t n) {
    MutexLock lock(&mu_);
    Await([&] { return answered_.size() >= n; });
    return answered_;
  }

 private:
  template <typename Ready>
  void Await(Ready ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const auto until = Clock::now() + std::chrono::seconds(10);
    while (!ready() && Clock::now() < until) changed_.WaitFor(&mu_, milliseconds(20));
  }

  Mutex mu_;
  CondVar changed_;
  std::vector<std::vector<std::string>> batches_ ABSL_GUARDED_BY(mu_);
  std::vector<DynamicBatcher::BatchDone> done_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> refused_ ABSL_GUARDED_BY(mu_), answered_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> reasons_ ABSL_GUARDED_BY(mu_);
};

class Named final : public BatchEntry {
 public:
  Named(std::string name, Record& record) : name(std::move(name)), record_(record) {}
  void Refuse(absl::Status why) override { record_.Refused(name, why); }
  const std::string name;

 private:
  Record& record_;
};

class DynamicBatcherTest : public ::testing::Test {
 protected:
  void Start(BatchPolicy policy) {
    if (policy.instance_devices.empty()) policy.instance_devices = {0};
    batcher_ = std::make_unique<DynamicBatcher>(
        std::move(policy), "model \"m\" version \"1\"",
        [this](std::vector<std::shared_ptr<BatchEntry>> batch, int, DynamicBatcher::BatchDone done) {
          std::vector<std::string> names;
          for (const auto& e : batch) names.push_back(static_cast<Named&>(*e).name);
          record_.Ran(std::move(names), std::move(done));
        });
  }
  std::shared_ptr<Named> Send(const std::string& name, int64_t rows = 1, std::string key = "k", uint64_t priority = 0,
                              milliseconds timeout = milliseconds(0)) {
    auto e = std::make_shared<Named>(name, record_);
    e->rows = rows;
    e->merge_key = std::move(key);
    e->priority = priority;
    e->timeout = timeout;
    e->cancel = std::make_shared<device::CancelToken>();
    batcher_->Enqueue(e);
    return e;
  }
  // Sends "busy" alone and waits until it holds the only instance.
  void Occupy() {
    Send("busy", 1, "busy-key");
    ASSERT_EQ(record_.Batches(1).size(), 1u);
  }
  void TearDown() override {
    // The batcher's destructor waits for the batches that run: finish them
    // (and any that start meanwhile) until it returns.
    std::atomic<bool> gone{false};
    std::thread stop([&] {
      batcher_.reset();
      gone = true;
    });
    while (!gone) {
      for (size_t i = 0; i < record_.Batches(0).size(); ++i) {
        if (finished_.insert(i).second) record_.Finish(i);
      }
      std::this_thread::sleep_for(milliseconds(2));
    }
    stop.join();
  }
  void Finish(size_t i) {
    finished_.insert(i);
    record_.Finish(i);
  }

  Record record_;
  std::set<size_t> finished_;
  std::unique_ptr<DynamicBatcher> batcher_;
};

BatchPolicy Policy(int64_t max_batch, std::vector<int64_t> preferred = {}, milliseconds delay = milliseconds(0)) {
  BatchPolicy p;
  p.max_batch_size = max_batch;
  p.preferred_batch_sizes = std::move(preferred);
  p.max_queue_delay = delay;
  return p;
}

TEST_F(DynamicBatcherTest, APreferredSizeGoesAtOnceAndTheRestWaitsForTheDelay) {
  Start(Policy(16, {4}, std::chrono::seconds(30)));
  for (const char* n : {"a", "b", "c", "d", "e"}) Send(n);
  // "e" alone makes no preferred size and its 30 s have not passed.
  EXPECT_THAT(record_.Batches(1), ElementsAre(ElementsAre("a", "b", "c", "d")));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(record_.Batches(0).size(), 1u);
  EXPECT_EQ(batcher_->queued(), 1u);
}

TEST_F(DynamicBatcherTest, WithoutAPreferredSizeTheHeadWaitsMaxQueueDelay) {
  Start(Policy(16, {8}, milliseconds(40)));
  auto a = Send("a", 3);
  auto b = Send("b", 2);
  EXPECT_THAT(record_.Batches(1), ElementsAre(ElementsAre("a", "b")));
  EXPECT_GE(a->dispatched - a->enqueued, milliseconds(40));
  EXPECT_GE(b->dispatched, b->enqueued);
}

TEST_F(DynamicBatcherTest, RequestsGatherWhileTheInstanceComputes) {
  Start(Policy(8));
  Occupy();
  for (const char* n : {"a", "b", "c"}) Send(n, 2);
  Send("d", 3);  // 2+2+2+3 > 8: ends the batch, goes next
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(record_.Batches(0).size(), 1u);  // the only instance is busy
  Finish(0);
  EXPECT_THAT(record_.Batches(2)[1], ElementsAre("a", "b", "c"));
  Finish(1);
  EXPECT_THAT(record_.Batches(3)[2], ElementsAre("d"));
}

TEST_F(DynamicBatcherTest, OtherShapesAndDevicesAreNotMerged) {
  BatchPolicy p = Policy(8);
  p.instance_devices = {0, 1};
  Start(p);
  Occupy();  // on npu:0, the first free instance
  auto on1 = std::make_shared<Named>("on-npu1", record_);
  on1->device = 1;
  on1->merge_key = "k";
  auto on0 = std::make_shared<Named>("on-npu0", record_);
  on0->device = 0;
  on0->merge_key = "k";
  batcher_->Enqueue(on0);  // waits for npu:0
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(record_.Batches(0).size(), 1u);
  Finish(0);
  EXPECT_THAT(record_.Batches(2)[1], ElementsAre("on-npu0"));
  Send("x", 1, "k");
  Send("y", 1, "other-shape");
  Send("z", 1, "k");
  batcher_->Enqueue(on1);
  // npu:1 is free: "x" goes alone ("y" cannot join); "y" and "z" wait for a
  // free instance and go apart; "on-npu1" joins "z".
  EXPECT_THAT(record_.Batches(3)[2], ElementsAre("x"));
  Finish(1);
  Finish(2);
  auto batches = record_.Batches(5);
  ASSERT_EQ(batches.size(), 5u);
  EXPECT_THAT(batches[3], ElementsAre("y"));
  EXPECT_THAT(batches[4], ElementsAre("z", "on-npu1"));
}

TEST_F(DynamicBatcherTest, HigherPriorityLevelsGoFirst) {
  BatchPolicy p = Policy(1);
  p.priority_levels = 3;
  p.default_priority = 2;
  Start(p);
  Occupy();
  Send("low", 1, "k", 3);
  Send("default", 1, "k", 0);
  Send("high", 1, "k", 1);
  Send("past-the-levels", 1, "k", 9);  // Triton's rule: the default level
  for (size_t i = 0; i < 4; ++i) Finish(i);
  auto batches = record_.Batches(5);
  ASSERT_EQ(batches.size(), 5u);
  EXPECT_THAT(batches[1], ElementsAre("high"));
  EXPECT_THAT(batches[2], ElementsAre("default"));
  EXPECT_THAT(batches[3], ElementsAre("past-the-levels"));
  EXPECT_THAT(batches[4], ElementsAre("low"));
}

TEST_F(DynamicBatcherTest, AFullQueueIsRefusedNamingTheLimit) {
  BatchPolicy p = Policy(4);
  p.max_queue_size = 2;
  Start(p);
  Occupy();
  Send("a");
  Send("b");
  Send("c");
  ASSERT_THAT(record_.RefusedNames(1), ElementsAre("c"));
  EXPECT_EQ(record_.Reason(0).code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(record_.Reason(0).message(), HasSubstr("max_queue_size 2"));
  EXPECT_THAT(record_.Reason(0).message(), HasSubstr("model \"m\""));
  Finish(0);
  EXPECT_THAT(record_.Batches(2)[1], ElementsAre("a", "b"));
}

TEST_F(DynamicBatcherTest, ATimedOutRequestIsRejectedAndTheOthersRun) {
  BatchPolicy p = Policy(4);
  p.default_timeout = std::chrono::microseconds(200000);
  p.allow_timeout_override = true;
  Start(p);
  Occupy();
  Send("short", 1, "k", 0, milliseconds(5));
  Send("long", 1, "k", 0, milliseconds(60000));  // may not lengthen the default 200 ms
  ASSERT_THAT(record_.RefusedNames(2), ElementsAre("short", "long"));
  EXPECT_EQ(record_.Reason(0).code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(record_.Reason(0).message(), HasSubstr("timeout"));
  Send("fresh");
  Finish(0);
  EXPECT_THAT(record_.Batches(2)[1], ElementsAre("fresh"));
}

TEST_F(DynamicBatcherTest, ATimedOutRequestIsDelayedBehindTheOthersOfItsLevel) {
  BatchPolicy p = Policy(1);
  p.timeout_action = BatchPolicy::TimeoutAction::kDelay;
  p.allow_timeout_override = true;
  Start(p);
  Occupy();
  Send("expires", 1, "k", 0, milliseconds(1));
  std::this_thread::sleep_for(milliseconds(30));
  Send("later");
  Finish(0);
  Finish(1);
  auto batches = record_.Batches(3);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_THAT(batches[1], ElementsAre("later"));
  EXPECT_THAT(batches[2], ElementsAre("expires"));
  EXPECT_TRUE(record_.RefusedNames(0).empty());
}

TEST_F(DynamicBatcherTest, ACancelledRequestLeavesTheQueueAtOnce) {
  Start(Policy(4));
  Occupy();
  Send("a");
  auto b = Send("b");
  Send("c");
  b->cancel->Cancel(absl::CancelledError("the client cancelled"));
  ASSERT_THAT(record_.RefusedNames(1), ElementsAre("b"));  // before the instance frees
  EXPECT_EQ(record_.Reason(0).code(), absl::StatusCode::kCancelled);
  Finish(0);
  EXPECT_THAT(record_.Batches(2)[1], ElementsAre("a", "c"));
  // A request cancelled before it is queued is refused, not queued.
  auto gone = std::make_shared<Named>("gone", record_);
  gone->cancel = std::make_shared<device::CancelToken>();
  gone->cancel->Cancel(absl::DeadlineExceededError("deadline"));
  batcher_->Enqueue(gone);
  EXPECT_THAT(record_.RefusedNames(2), ElementsAre("b", "gone"));
}

// Two instances; the second batch finishes first.
std::vector<std::string> AnswerOrder(bool preserve) {
  Record record;
  BatchPolicy p = Policy(1);
  p.preserve_ordering = preserve;
  p.instance_devices = {0, 0};
  {
    DynamicBatcher batcher(p, "m", [&record](std::vector<std::shared_ptr<BatchEntry>> batch, int,
                                             DynamicBatcher::BatchDone done) {
      record.Ran({static_cast<Named&>(*batch[0]).name}, std::move(done));
    });
    for (const char* n : {"first", "second"}) batcher.Enqueue(std::make_shared<Named>(n, record));
    record.Batches(2);
    record.Finish(1);
    std::this_thread::sleep_for(milliseconds(20));
    record.Finish(0);
  }
  return record.AnsweredNames(2);
}

TEST(DynamicBatcherOrderingTest, PreserveOrderingReleasesAnswersInArrivalOrder) {
  EXPECT_THAT(AnswerOrder(true), ElementsAre("first", "second"));
  EXPECT_THAT(AnswerOrder(false), ElementsAre("second", "first"));
}

TEST(BatchPolicyTest, ATimeoutOverrideMayOnlyShortenTheDefault) {
  BatchPolicy p;
  p.default_timeout = std::chrono::microseconds(100);
  EXPECT_EQ(p.TimeoutOf(std::chrono::microseconds(10)).count(), 100);  // no override allowed
  p.allow_timeout_override = true;
  EXPECT_EQ(p.TimeoutOf(std::chrono::microseconds(10)).count(), 10);
  EXPECT_EQ(p.TimeoutOf(std::chrono::microseconds(1000)).count(), 100);
  p.default_timeout = std::chrono::microseconds(0);
  EXPECT_EQ(p.TimeoutOf(std::chrono::microseconds(1000)).count(), 1000);
}

}  // namespace
}  // namespace npu::core
