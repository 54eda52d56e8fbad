#include "client/cli/chrome_trace.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/task_span.h"

namespace npu::client::cli {
namespace {

constexpr int kTracksPerCore = 8;
// HCCL tasks (collectives on the links, no core) get a track of their own
// after every core's, so they draw beside the compute they overlap.
constexpr int kCommTrack = 1 << 20;
constexpr std::array<const char*, 7> kUnits = {"cube", "vector", "scalar", "mte1", "mte2", "mte3", "fixpipe"};

std::array<uint64_t, 7> Busy(const npu::v1::UnitCycles& b) {
  return {b.cube(), b.vector(), b.scalar(), b.mte1(), b.mte2(), b.mte3(), b.fixpipe()};
}

std::string JsonString(const std::string& s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += static_cast<char>(c);
    } else if (c < 0x20) {
      r += absl::StrFormat("\\u%04x", c);
    } else {
      r += static_cast<char>(c);
    }
  }
  return r + "\"";
}

// "npu:3" -> 3; anything else -> 0.
int DevicePid(const std::string& device) {
  int n = 0;
  const size_t colon = device.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(device.substr(colon + 1), &n)) return 0;
  return n;
}

class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) {}

  void Meta(const char* what, int tid, const std::string& args) {
    Begin();
    out_ << "{\"name\":\"" << what << "\",\"ph\":\"M\",\"pid\":" << pid_ << ",\"tid\":" << tid
         << ",\"args\":{" << args << "}}";
  }
  // `start` is a device cycle; events are placed from the run's arrival.
  void Slice(const std::string& name, const char* cat, int tid, uint64_t start, uint64_t cycles,
             const std::string& args) {
    Begin();
    out_ << "{\"name\":" << JsonString(name) << ",\"cat\":\"" << cat << "\",\"ph\":\"X\",\"pid\":" << pid_
         << ",\"tid\":" << tid << absl::StrFormat(",\"ts\":%.6f,\"dur\":%.6f", Us(start), cycles / mhz_)
         << ",\"args\":{" << args << "}}";
  }
  void Counter(const char* name, uint64_t at, uint64_t value) {
    Begin();
    out_ << "{\"name\":\"" << name << "\",\"ph\":\"C\",\"pid\":" << pid_ << absl::StrFormat(",\"ts\":%.6f", Us(at))
         << ",\"args\":{\"elements\":" << value << "}}";
  }
  // The device whose events follow: its pid, clock, and the cycle its run arrived.
  void set_device(int pid, double clock_mhz, uint64_t origin) {
    pid_ = pid;
    mhz_ = clock_mhz;
    origin_ = origin;
  }

 private:
  void Begin() {
    out_ << (first_ ? "\n" : ",\n");
    first_ = false;
  }
  double Us(uint64_t cycle) const {
    return cycle >= origin_ ? (cycle - origin_) / mhz_ : -static_cast<double>(origin_ - cycle) / mhz_;
  }

  std::ostream& out_;
  int pid_ = 0;
  double mhz_ = 1;
  uint64_t origin_ = 0;
  bool first_ = true;
};

double ClockOf(const npu::v1::Profile& profile) { return profile.clock_mhz() > 0 ? profile.clock_mhz() : 1.0; }

// One device's run: its process, tracks and events.
void WriteDeviceEvents(const npu::v1::Profile& profile, EventWriter& w) {
  w.set_device(DevicePid(profile.device()), ClockOf(profile), profile.start_cycle());
  w.Meta("process_name", 0, absl::StrCat("\"name\":", JsonString(absl::StrCat(profile.device(), " (",
                                                                              profile.preset(), ")"))));
  w.Meta("thread_name", 0, "\"name\":\"ops\"");
  bool comm = false;
  for (const npu::v1::NodeProfile& node : profile.nodes()) comm = comm || node.task_type() == "HCCL";
  if (comm) {
    w.Meta("thread_name", kCommTrack, "\"name\":\"HCCL (communication)\"");
    w.Meta("thread_sort_index", kCommTrack, absl::StrCat("\"sort_index\":", kCommTrack));
  }
  // Name only the tracks the run used: the cores it placed tiles on, the units it kept busy there.
  std::map<int, std::array<bool, kUnits.size()>> used;
  for (const npu::v1::NodeProfile& node : profile.nodes()) {
    for (const npu::v1::TileSlice& t : node.tiles()) {
      auto& units = used.try_emplace(t.core()).first->second;
      const auto busy = Busy(t.busy());
      for (size_t u = 0; u < kUnits.size(); ++u) units[u] = units[u] || busy[u] > 0;
    }
  }
  std::map<int, std::string> kinds;
  for (const npu::v1::CoreProfile& c : profile.cores()) kinds[c.core()] = c.kind();
  for (const auto& [core, units] : used) {
    const int base = core * kTracksPerCore + 1;
    const std::string kind = kinds.count(core) ? kinds[core] : "core";
    w.Meta("thread_name", base, absl::StrCat("\"name\":\"core ", core, " (", kind, ")\""));
    w.Meta("thread_sort_index", base, absl::StrCat("\"sort_index\":", base));
    for (size_t u = 0; u < kUnits.size(); ++u) {
      if (!units[u]) continue;
      w.Meta("thread_name", base + 1 + static_cast<int>(u),
             absl::StrCat("\"name\":\"core ", core, " ", kUnits[u], "\""));
      w.Meta("thread_sort_index", base + 1 + static_cast<int>(u),
             absl::StrCat("\"sort_index\":", base + 1 + static_cast<int>(u)));
    }
  }
  for (const npu::v1::NodeProfile& node : profile.nodes()) {
    const std::string node_args = absl::StrCat("\"op_type\":", JsonString(node.op_type()), ",\"task_type\":",
                                               JsonString(node.task_type()), ",\"block_dim\":", node.block_dim());
    const auto [issue, done] = TaskSpanOf(node);
    const bool hccl = node.task_type() == "HCCL";
    w.Slice(node.name(), hccl ? "hccl" : "op", hccl ? kCommTrack : 0, issue, done - issue,
            absl::StrCat(node_args, ",\"tiles\":", node.tiles_size(), ",\"ready_cycle\":", node.ready_cycle(),
                         ",\"dispatch_cycle\":", issue, ",\"start_cycle\":", node.start_cycle(),
                         ",\"end_cycle\":", node.end_cycle(), ",\"complete_cycle\":", done,
                         ",\"wait_cycles\":", node.wait_cycles(), ",\"overflow_elements\":",
                         node.overflow_elements()));
    w.Counter("overflow", issue, node.overflow_elements());
    w.Counter("overflow", done, 0);
    for (const npu::v1::TileSlice& t : node.tiles()) {
      const int base = t.core() * kTracksPerCore + 1;
      const uint64_t span = t.end_cycle() - t.start_cycle();
      const auto busy = Busy(t.busy());
      std::string args = absl::StrCat(node_args, ",\"cycles\":", span);
      for (size_t u = 0; u < kUnits.size(); ++u) absl::StrAppend(&args, ",\"", kUnits[u], "\":", busy[u]);
      w.Slice(node.name(), "tile", base, t.start_cycle(), span, args);
      for (size_t u = 0; u < kUnits.size(); ++u) {
        if (busy[u] == 0) continue;
        w.Slice(kUnits[u], "unit", base + 1 + static_cast<int>(u), t.start_cycle(), std::min(busy[u], span),
                absl::StrCat("\"node\":", JsonString(node.name()), ",\"busy_cycles\":", busy[u]));
      }
    }
  }
}

}  // namespace

void WriteChromeTrace(absl::Span<const npu::v1::Profile> profiles, std::ostream& out) {
  const npu::v1::Profile& first = profiles.empty() ? npu::v1::Profile::default_instance() : profiles[0];
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"model_version\":" << JsonString(first.model_version())
      << ",\"preset\":" << JsonString(first.preset()) << ",\"clock_mhz\":" << ClockOf(first)
      << ",\"start_cycle\":" << first.start_cycle() << ",\"end_cycle\":" << first.end_cycle()
      << ",\"note\":\"modeled cycles, not measured; ts counts from the run's arrival (start_cycle)"
      << (profiles.size() > 1 ? " on each device (start_cycle, end_cycle: the first's)" : "") << "\"},"
      << "\"traceEvents\":[";
  EventWriter w(out);
  for (const npu::v1::Profile& profile : profiles) WriteDeviceEvents(profile, w);
  out << "\n]}\n";
}

void WriteChromeTrace(const npu::v1::Profile& profile, std::ostream& out) {
  WriteChromeTrace(absl::MakeConstSpan(&profile, 1), out);
}

absl::Status WriteChromeTraceFile(absl::Span<const npu::v1::Profile> profiles, const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return absl::PermissionDeniedError(absl::StrCat("cannot write trace \"", path, "\""));
  WriteChromeTrace(profiles, f);
  f.close();
  if (!f) return absl::DataLossError(absl::StrCat("error writing trace \"", path, "\""));
  return absl::OkStatus();
}

absl::Status WriteChromeTraceFile(const npu::v1::Profile& profile, const std::string& path) {
  return WriteChromeTraceFile(absl::MakeConstSpan(&profile, 1), path);
}

}  // namespace npu::client::cli
