// `npu run --profile --trace --op-summary` against a real server: the op
// summary prints, the CSV has msprof's columns, and the trace parses as JSON
// with one "tile" slice per scheduled tile (checked with Python's json module,
// an independent parser).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "tests/e2e/server_process.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string output;
};

Result Shell(const std::string& command) {
  Result r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// msprof's op_summary header for each chip family, as msprof writes it.
constexpr const char* kSeparatedHeader =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),"
    "Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
    "Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),"
    "aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),"
    "aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,"
    "aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,"
    "aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)";
constexpr const char* kCoupledHeader =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),"
    "Task Wait Time(us),Block Dim,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
    "Output Formats,aicore_time(us),total_cycles,vec_time(us),vec_ratio,mac_time(us),mac_ratio,scalar_time(us),"
    "scalar_ratio,mte1_time(us),mte1_ratio,mte2_time(us),mte2_ratio,mte3_time(us),mte3_ratio,icache_miss_rate,"
    "memory_bound";

// The trace: valid JSON, one tile slice per scheduled tile (each op slice
// says how many tiles it had; its tiles use at most block_dim cores), tiles
// never overlap on a core, only used cores are named, the first op starts at
// the run's origin. The CSV, read the way scripts written for msprof read it
// (by column name): every time parses, every ratio is within [0, 1], the ops'
// durations add up to at most the run, one row per op slice.
constexpr const char* kCheck = R"PY(
import csv, json, sys, collections
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
tiles = [e for e in ev if e.get("cat") == "tile"]
ops = [e for e in ev if e.get("cat") == "op"]
assert ops and tiles, "no op or tile slices"
assert all(e["ph"] == "X" and e["dur"] >= 0 for e in tiles)
assert len(tiles) == sum(o["args"]["tiles"] for o in ops), "not one slice per scheduled tile"
for o in ops:
    mine = [e for e in tiles if e["name"] == o["name"]]
    assert len({e["tid"] for e in mine}) <= o["args"]["block_dim"], o["name"]
per_core = collections.defaultdict(list)
for e in tiles: per_core[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
for spans in per_core.values():
    spans.sort()
    assert all(b[0] >= a[1] - 1e-6 for a, b in zip(spans, spans[1:])), "tiles overlap on a core"
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
assert names[0] == "ops"
assert {tid for tid in names if tid % 8 == 1} == set(per_core), "named cores are not the cores used"
assert abs(min(o["ts"] for o in ops)) < 1e-9, "the run's first op does not start at 0"
assert any(e.get("ph") == "C" and e["name"] == "overflow" for e in ev)
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(ops), (len(rows), len(ops))
run_us = (t["otherData"]["end_cycle"] - t["otherData"]["start_cycle"]) / t["otherData"]["clock_mhz"]
total = 0.0
for r in rows:
    start, duration, wait = (float(r[k]) for k in ("Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)"))
    assert start >= 0 and duration > 0 and wait >= 0, r["Op Name"]
    assert start + duration <= run_us + 1e-3, r["Op Name"]  # two figures rounded to 3 decimals
    total += duration
    for k, v in r.items():
        if k.endswith("_ratio") and v != "N/A":
            assert 0.0 <= float(v) <= 1.0 + 1e-9, (r["Op Name"], k, v)
by_type = collections.Counter(r["Task Type"] for r in rows)
slowest = max(rows, key=lambda r: float(r["Task Duration(us)"]))
print(len(tiles), dict(by_type), slowest["Op Name"])
)PY";

// The MLP fuses into its two MatMuls (bias and Relu in their epilogues); a
// --debug run plans it unfused, with the Adds and the Relu as Vector tasks.
TEST(ProfileTraceTest, RunWritesOpSummaryAndTrace) {
  for (auto [preset, header, debug, task_types] :
       {std::tuple{"ascend910b", kSeparatedHeader, false, "{'AI_CORE': 2}"},
        std::tuple{"ascend910b", kSeparatedHeader, true, "'AI_CORE': 2, 'AI_VECTOR_CORE': 3"},
        std::tuple{"ascend910", kCoupledHeader, false, "{'AI_CORE': 2}"},
        std::tuple{"ascend910", kCoupledHeader, true, "'AI_CORE': 5"}}) {
    SCOPED_TRACE(std::string(preset) + (debug ? " --debug" : ""));
    npu::testing::ServerProcess server({std::string("--preset=") + preset});
    const fs::path dir = fs::path(::testing::TempDir()) / ("npu-trace-" + std::to_string(getpid()) + preset);
    fs::create_directories(dir);
    const fs::path trace = dir / "T.json", summary = dir / "S.csv";
    const std::string examples = std::string(NPU_SOURCE_DIR) + "/examples/graphs/";
    const Result run = Shell(std::string(NPU_CLI_BIN) + " --target " + server.target() + " run " + examples +
                             "mlp.json --input x=" + examples + "mlp_x.npy --output-dir " + (dir / "out").string() +
                             " --profile --trace " + trace.string() + " --op-summary " + summary.string() +
                             (debug ? " --debug" : ""));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("Task Wait Time(us)"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("AI_CORE"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("model_version davinci-cost-model/"), std::string::npos) << run.output;

    const std::string csv = ReadFile(summary);
    EXPECT_EQ(csv.substr(0, csv.find('\n')), header);
    std::ofstream(dir / "check.py") << kCheck;
    const Result checked = Shell(std::string(NPU_PYTHON) + " " + (dir / "check.py").string() + " " +
                                 trace.string() + " " + summary.string());
    ASSERT_EQ(checked.exit_code, 0) << checked.output;
    EXPECT_NE(checked.output.find(task_types), std::string::npos) << checked.output;
    if (!debug) EXPECT_NE(run.output.find("fc1+bias1+relu1  MatMul+Add+Relu"), std::string::npos) << run.output;
    fs::remove_all(dir);
  }
}

}  // namespace
