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

TEST(ProfileTraceTest, RunWritesOpSummaryAndTrace) {
  npu::testing::ServerProcess server;
  const fs::path dir = fs::path(::testing::TempDir()) / ("npu-trace-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path trace = dir / "T.json", summary = dir / "S.csv";
  const std::string examples = std::string(NPU_SOURCE_DIR) + "/examples/graphs/";
  const Result run = Shell(std::string(NPU_CLI_BIN) + " --target " + server.target() + " run " + examples +
                           "mlp.json --input x=" + examples + "mlp_x.npy --output-dir " + (dir / "out").string() +
                           " --profile --trace " + trace.string() + " --op-summary " + summary.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("aic_mac_ratio"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("AI_CORE"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("model_version davinci-cost-model/"), std::string::npos) << run.output;

  const std::string csv = ReadFile(summary);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "Op Name,OP Type,Task Type,Block Dim,Task Duration(us),aicore_time(us),aic_total_cycles,aic_mac_ratio,"
            "aic_scalar_ratio,aic_mte1_ratio,aic_mte2_ratio,aic_fixpipe_ratio,aiv_vec_ratio,aiv_scalar_ratio,"
            "aiv_mte2_ratio,aiv_mte3_ratio");

  // The trace: valid JSON, one tile slice per scheduled tile (each op slice
  // says how many tiles it had; its tiles use at most block_dim cores), tiles
  // never overlap on a core, and every ratio in the CSV is within [0, 1].
  const std::string check = R"PY(
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
names = {e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
assert "ops" in names and any(n.endswith("(ai_core)") for n in names), names
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(ops), (len(rows), len(ops))
for r in rows:
    for k, v in r.items():
        if k.endswith("_ratio") and v != "N/A":
            assert 0.0 <= float(v) <= 1.0 + 1e-9, (r["Op Name"], k, v)
print(len(tiles))
)PY";
  std::ofstream(dir / "check.py") << check;
  const Result checked =
      Shell(std::string(NPU_PYTHON) + " " + (dir / "check.py").string() + " " + trace.string() + " " +
            summary.string());
  ASSERT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_GT(std::stoi(checked.output), 0);
  fs::remove_all(dir);
}

}  // namespace
