#include "server/core/dynamic_batcher.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace npu::core {

DynamicBatcher::DynamicBatcher(BatchPolicy policy, std::string name, Runner runner)
    : policy_(std::move(policy)), name_(std::move(name)), runner_(std::move(runner)) {
  levels_.resize(std::max<uint64_t>(1, policy_.priority_levels));
  busy_.assign(policy_.instance_devices.size(), false);
  thread_ = std::thread([this] { Loop(); });
}

DynamicBatcher::~DynamicBatcher() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    changed_.SignalAll();
  }
  thread_.join();
}

size_t DynamicBatcher::queued() const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const Level& l : levels_) n += l.size();
  return n;
}

void DynamicBatcher::Enqueue(std::shared_ptr<BatchEntry> entry) {
  BatchEntry* e = entry.get();
  if (e->device >= 0 && std::find(policy_.instance_devices.begin(), policy_.instance_devices.end(), e->device) ==
                            policy_.instance_devices.end()) {
    return e->Refuse(absl::InvalidArgumentError(
        absl::StrCat(name_, " has no instance on npu:", e->device, " (its instance_group places them)")));
  }
  // The hook goes first: a cancel that comes before the entry is queued is
  // seen below, one that comes after finds it in the queue.
  if (e->cancel != nullptr && !e->cancel->SetHook([this, e] { Cancelled(e); })) {
    return e->Refuse(e->cancel->reason());
  }
  absl::Status refused;
  bool accepted = false;
  {
    MutexLock lock(&mu_);
    const uint64_t level = policy_.LevelOf(e->priority);
    Level& queue = levels_[level - 1];
    if (stopping_) {
      refused = absl::UnavailableError(absl::StrCat(name_, " is being unloaded"));
    } else if (policy_.max_queue_size > 0 && queue.size() >= policy_.max_queue_size) {
      // Triton answers a full queue with UNAVAILABLE too: the client may retry.
      refused = absl::UnavailableError(absl::StrCat(name_, ": the dynamic batcher's queue is full (max_queue_size ",
                                                    policy_.max_queue_size,
                                                    levels_.size() > 1 ? absl::StrCat(" at priority level ", level) : "",
                                                    ")"));
    } else {
      accepted = true;
      e->seq_ = next_seq_++;
      e->level_ = level;
      e->enqueued = Clock::now();
      const std::chrono::microseconds timeout = policy_.TimeoutOf(e->timeout);
      if (timeout.count() > 0) e->deadline_ = e->enqueued + timeout;
      queue.ready.push_back(std::move(entry));
      changed_.Signal();
      if (e->cancel == nullptr || !e->cancel->cancelled()) return;
      // Cancelled while it was being queued: the hook may have missed it.
      if (Take(e) == nullptr) return;  // the hook took it
      refused = e->cancel->reason();
    }
  }
  if (e->cancel != nullptr) e->cancel->ClearHook();
  e->Refuse(refused);
  if (accepted) Release({e->seq_}, {nullptr});
}

std::shared_ptr<BatchEntry> DynamicBatcher::Take(const BatchEntry* entry) {
  for (Level& level : levels_) {
    for (auto* q : {&level.ready, &level.delayed}) {
      auto it = std::find_if(q->begin(), q->end(), [entry](const auto& e) { return e.get() == entry; });
      if (it != q->end()) {
        std::shared_ptr<BatchEntry> found = std::move(*it);
        q->erase(it);
        return found;
      }
    }
  }
  return nullptr;
}

void DynamicBatcher::Cancelled(const BatchEntry* entry) {
  std::shared_ptr<BatchEntry> found;
  {
    MutexLock lock(&mu_);
    found = Take(entry);
  }
  if (found == nullptr) return;  // in a batch already, or answered
  found->Refuse(found->cancel->reason());
  Release({found->seq_}, {nullptr});
}

void DynamicBatcher::Expire(Clock::time_point now, std::vector<std::shared_ptr<BatchEntry>>& refused) {
  for (Level& level : levels_) {
    for (auto it = level.ready.begin(); it != level.ready.end();) {
      BatchEntry& e = **it;
      if (e.deadline_ > now) {
        ++it;
        continue;
      }
      if (policy_.timeout_action == BatchPolicy::TimeoutAction::kReject) {
        refused.push_back(std::move(*it));
      } else {
        e.delayed_ = true;
        e.deadline_ = Clock::time_point::max();
        level.delayed.push_back(std::move(*it));
      }
      it = level.ready.erase(it);
    }
  }
}

int DynamicBatcher::FreeInstance(int device) const {
  for (size_t i = 0; i < busy_.size(); ++i) {
    if (!busy_[i] && (device < 0 || policy_.instance_devices[i] == device)) return static_cast<int>(i);
  }
  return -1;
}

DynamicBatcher::Formed DynamicBatcher::Form(Clock::time_point now) {
  Formed f;
  std::vector<BatchEntry*> order;
  for (const Level& level : levels_) {
    for (const auto& e : level.ready) order.push_back(e.get());
    for (const auto& e : level.delayed) order.push_back(e.get());
  }
  if (order.empty()) return f;
  const BatchEntry& head = *order.front();
  const int instance = FreeInstance(head.device);
  if (instance < 0) return f;  // an instance that finishes wakes the loop
  const int device = policy_.instance_devices[instance];
  const int64_t target = policy_.preferred_batch_sizes.empty() ? policy_.max_batch_size
                                                               : policy_.preferred_batch_sizes.back();
  int64_t rows = 0;
  size_t n = 0, preferred = 0;
  bool full = false;
  for (const BatchEntry* e : order) {
    if (e->merge_key != head.merge_key || (e->device >= 0 && e->device != device) ||
        rows + e->rows > policy_.max_batch_size) {
      full = true;
      break;
    }
    rows += e->rows;
    ++n;
    if (std::binary_search(policy_.preferred_batch_sizes.begin(), policy_.preferred_batch_sizes.end(), rows)) {
      preferred = n;
    }
    if (rows >= target) {
      full = true;
      break;
    }
  }
  const Clock::time_point due = head.enqueued + policy_.max_queue_delay;
  if (preferred == 0 && !full && now < due) {
    f.wake = due;
    return f;
  }
  const size_t take = preferred > 0 ? preferred : n;
  for (Level& level : levels_) {
    for (auto* q : {&level.ready, &level.delayed}) {
      while (f.batch.size() < take && !q->empty()) {
        f.batch.push_back(std::move(q->front()));
        q->pop_front();
      }
    }
  }
  f.instance = instance;
  busy_[instance] = true;
  ++running_;
  return f;
}

void DynamicBatcher::Loop() {
  mu_.Lock();
  while (!stopping_) {
    const Clock::time_point now = Clock::now();
    std::vector<std::shared_ptr<BatchEntry>> expired;
    Expire(now, expired);
    Formed f;
    if (expired.empty()) f = Form(now);
    if (!expired.empty() || !f.batch.empty()) {
      mu_.Unlock();
      if (!expired.empty()) {
        RefuseAll(std::move(expired),
                  absl::UnavailableError(absl::StrCat(name_, ": the request's queue timeout expired before it ran")));
      }
      if (!f.batch.empty()) {
        const Clock::time_point dispatched = Clock::now();
        for (const auto& e : f.batch) {
          if (e->cancel != nullptr) e->cancel->ClearHook();
          e->dispatched = dispatched;
        }
        const int device = policy_.instance_devices[f.instance];
        runner_(f.batch, device, [this, instance = f.instance, batch = f.batch](std::vector<Answer> answers) mutable {
          Finished(instance, std::move(batch), std::move(answers));
        });
      }
      mu_.Lock();
      continue;
    }
    Clock::time_point wake = f.wake;
    for (const Level& level : levels_) {
      for (const auto& e : level.ready) wake = std::min(wake, e->deadline_);
    }
    if (wake == Clock::time_point::max()) {
      changed_.Wait(&mu_);
    } else if (wake > now) {
      changed_.WaitFor(&mu_, wake - now);
    }
  }
  std::vector<std::shared_ptr<BatchEntry>> left;
  for (Level& level : levels_) {
    for (auto* q : {&level.ready, &level.delayed}) {
      for (auto& e : *q) left.push_back(std::move(e));
      q->clear();
    }
  }
  mu_.Unlock();
  RefuseAll(std::move(left), absl::UnavailableError(absl::StrCat(name_, " is being unloaded")));
  MutexLock lock(&mu_);
  while (running_ > 0) changed_.Wait(&mu_);
}

void DynamicBatcher::RefuseAll(std::vector<std::shared_ptr<BatchEntry>> entries, const absl::Status& why) {
  for (const auto& e : entries) {
    if (e->cancel != nullptr) e->cancel->ClearHook();
    e->Refuse(why);
    Release({e->seq_}, {nullptr});
  }
}

void DynamicBatcher::Finished(int instance, std::vector<std::shared_ptr<BatchEntry>> batch,
                              std::vector<Answer> answers) {
  {
    MutexLock lock(&mu_);
    busy_[instance] = false;
    changed_.SignalAll();
  }
  std::vector<uint64_t> seqs;
  for (const auto& e : batch) seqs.push_back(e->seq_);
  answers.resize(seqs.size());
  Release(seqs, std::move(answers));
  MutexLock lock(&mu_);
  --running_;
  changed_.SignalAll();
}

void DynamicBatcher::Release(const std::vector<uint64_t>& seqs, std::vector<Answer> answers) {
  if (!policy_.preserve_ordering) {
    for (Answer& a : answers) {
      if (a) a();
    }
    return;
  }
  order_mu_.Lock();
  for (size_t i = 0; i < seqs.size(); ++i) held_[seqs[i]] = std::move(answers[i]);
  if (releasing_) {  // the thread releasing now takes these too
    order_mu_.Unlock();
    return;
  }
  releasing_ = true;
  while (true) {
    std::vector<Answer> due;
    while (!held_.empty() && held_.begin()->first == next_release_) {
      due.push_back(std::move(held_.begin()->second));
      held_.erase(held_.begin());
      ++next_release_;
    }
    if (due.empty()) break;
    order_mu_.Unlock();
    for (Answer& a : due) {
      if (a) a();
    }
    order_mu_.Lock();
  }
  releasing_ = false;
  order_mu_.Unlock();
}

}  // namespace npu::core
