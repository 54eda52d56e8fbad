#include "client/cli/load_step_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"

namespace npu::client::cli {
namespace {

using Clock = std::chrono::steady_clock;

// One measurement window: a slot per request, written once by the caller that
// sent it; `answered` counts the slots written. Slots come in chunks allocated
// when first written, so a window of a billion requests that --duration ends
// early costs only what it measured.
class Window {
 public:
  static constexpr int64_t kChunk = int64_t{1} << 16;

  explicit Window(int64_t size) : size_(size), chunks_(static_cast<size_t>((size + kChunk - 1) / kChunk)) {}

  RequestRecord& Slot(int64_t i) {
    std::atomic<RequestRecord*>& chunk = chunks_[static_cast<size_t>(i / kChunk)];
    RequestRecord* records = chunk.load(std::memory_order_acquire);
    if (records == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      records = chunk.load(std::memory_order_relaxed);
      if (records == nullptr) {
        owned_.push_back(std::make_unique<RequestRecord[]>(static_cast<size_t>(kChunk)));
        records = owned_.back().get();
        chunk.store(records, std::memory_order_release);
      }
    }
    return records[i % kChunk];
  }
  // Counts slot i answered; true for the window's last.
  bool MarkAnswered() { return answered_.fetch_add(1, std::memory_order_acq_rel) + 1 == size_; }
  bool Complete() const { return answered_.load(std::memory_order_acquire) == size_; }
  int64_t answered() const { return answered_.load(std::memory_order_relaxed); }

  // The answered records. Only once no caller writes any more: the window is
  // complete, or the callers have been joined.
  void AppendAnswered(std::vector<RequestRecord>& out) const {
    for (size_t c = 0; c < chunks_.size(); ++c) {
      const RequestRecord* records = chunks_[c].load(std::memory_order_acquire);
      if (records == nullptr) continue;
      const int64_t n = std::min(kChunk, size_ - static_cast<int64_t>(c) * kChunk);
      for (int64_t i = 0; i < n; ++i) {
        if (records[i].answered_ns > 0) out.push_back(records[i]);
      }
    }
  }
  // Frees a complete window's slots: its summary no longer needs them.
  void Drop() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& chunk : chunks_) chunk.store(nullptr, std::memory_order_relaxed);
    owned_.clear();
  }

 private:
  const int64_t size_;
  std::vector<std::atomic<RequestRecord*>> chunks_;
  std::atomic<int64_t> answered_{0};
  std::mutex mu_;  // guards owned_ and chunk allocation
  std::vector<std::unique_ptr<RequestRecord[]>> owned_;
};

int64_t Nanos(Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }

void RecordProfile(const npu::v1::Profile& p, RequestRecord& r) {
  r.server_compute_us = static_cast<float>(p.host_time_us());
  if (p.clock_mhz() > 0) {
    const uint64_t queue = std::min(p.queue_cycles(), p.total_cycles());
    r.device_queue_us = static_cast<float>(static_cast<double>(queue) / p.clock_mhz());
    r.device_compute_us = static_cast<float>(static_cast<double>(p.total_cycles() - queue) / p.clock_mhz());
  } else {
    r.device_queue_us = r.device_compute_us = 0;
  }
}

// The answered records of windows [from, to), merged.
std::vector<RequestRecord> Answered(const std::vector<std::unique_ptr<Window>>& windows, int from, int to) {
  std::vector<RequestRecord> all;
  for (int k = from; k < to; ++k) windows[k]->AppendAnswered(all);
  return all;
}

}  // namespace

LoadStep RunLoadStep(Client& client, const npu::v1::RunRequest& request, const LoadCommandArgs& args,
                     int concurrency, std::ostream& progress_out) {
  const bool check_stability = args.stability_percentage > 0;
  const int max_windows = check_stability ? args.max_windows : 1;
  std::vector<std::unique_ptr<Window>> store;
  for (int k = 0; k < max_windows; ++k) store.push_back(std::make_unique<Window>(args.requests));
  const Clock::time_point origin = Clock::now();
  const Clock::time_point deadline =
      origin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(args.duration_s));

  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;  // guards the fields below
  std::condition_variable window_done;
  int windows_done_events = 0;
  std::map<std::string, std::string> first_error_message;

  auto caller = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const int64_t i = next.fetch_add(1, std::memory_order_relaxed);
      Clock::time_point sent = Clock::now();
      if (args.rate > 0) {
        // Open loop: request i is due at origin + i / rate, whether or not earlier ones are done.
        sent = origin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / args.rate));
        if (sent >= deadline) return;
        std::this_thread::sleep_until(sent);
        if (stop.load(std::memory_order_relaxed)) return;
      }
      const absl::StatusOr<npu::v1::RunResponse> response = client.Run(request);
      const Clock::time_point answered = Clock::now();
      const int64_t m = i - args.warmup;
      // Warm-up, or past the last window: unmeasured, but the load stays on
      // while the last measured requests finish.
      if (m < 0 || m / args.requests >= max_windows) continue;
      Window& w = *store[static_cast<size_t>(m / args.requests)];
      RequestRecord& r = w.Slot(m % args.requests);
      r.sent_ns = Nanos(sent - origin);
      r.answered_ns = std::max<int64_t>(1, Nanos(answered - origin));
      r.status_code = static_cast<int>(response.status().code());
      if (response.ok() && response->has_profile()) RecordProfile(response->profile(), r);
      if (response.ok() && response->has_execution()) {
        r.executed_batch = static_cast<int32_t>(std::min<int64_t>(response->execution().batch_size(), INT32_MAX));
      }
      if (!response.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        first_error_message.emplace(absl::StatusCodeToString(response.status().code()),
                                    std::string(response.status().message()));
      }
      if (w.MarkAnswered()) {
        std::lock_guard<std::mutex> lock(mu);
        ++windows_done_events;
        window_done.notify_one();
      }
    }
  };
  std::vector<std::thread> callers;
  callers.reserve(static_cast<size_t>(concurrency));
  for (int t = 0; t < concurrency; ++t) callers.emplace_back(caller);

  // This thread waits for windows to complete, checks stability, and draws
  // the progress line; it never measures time for the row.
  LoadStep step;
  std::vector<LoadStep> windows;  // summaries of the complete windows, in order
  int seen_events = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu);
      window_done.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(100)),
                             [&] { return windows_done_events > seen_events; });
      seen_events = windows_done_events;
    }
    while (static_cast<int>(windows.size()) < max_windows && store[windows.size()]->Complete()) {
      const int k = static_cast<int>(windows.size());
      windows.push_back(Summarize(Answered(store, k, k + 1)));
      if (k >= kStableWindows) store[k - kStableWindows]->Drop();
    }
    const int done = static_cast<int>(windows.size());
    if (check_stability && done >= kStableWindows &&
        WindowsAgree({windows.end() - kStableWindows, windows.end()}, args.stability_percentage)) {
      step.stable = true;
      break;
    }
    if (done == max_windows) {
      if (check_stability) step.stable = false;
      break;
    }
    if (Clock::now() >= deadline) {
      step.stopped_by_duration = true;
      if (check_stability) step.stable = false;
      break;
    }
    if (args.progress) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - origin).count();
      progress_out << "\r\033[K"
                   << absl::StrFormat("concurrency %d: window %d, %d/%d requests, %.1f s", concurrency, done + 1,
                                      store[std::min(done, max_windows - 1)]->answered(), args.requests, elapsed)
                   << std::flush;
    }
  }
  stop.store(true);
  for (std::thread& t : callers) t.join();
  if (args.progress) progress_out << "\r\033[K" << std::flush;

  // The row: the last (up to) three complete windows, or what the one
  // unfinished window got when --duration ended it.
  const int done = static_cast<int>(windows.size());
  const std::vector<RequestRecord> measured =
      done > 0 ? Answered(store, std::max(0, done - kStableWindows), done) : Answered(store, 0, 1);
  LoadStep row = Summarize(measured);
  row.concurrency = concurrency;
  row.rate = args.rate;
  row.windows = done;
  row.stable = step.stable;
  row.stopped_by_duration = step.stopped_by_duration;
  for (const auto& [code, n] : row.errors_by_code) {
    if (auto it = first_error_message.find(code); it != first_error_message.end()) {
      row.first_error_message.insert(*it);
    }
  }
  return row;
}

}  // namespace npu::client::cli
