// `--profile-dir` of `npu run` and of a two-device `npu train`: the Ascend
// PyTorch Profiler's files, laid out one folder per rank, with its exact
// headers; their times add up: op_statistic's totals are the sums of the
// kernel_details rows, and each step's Computing + Communication(Not
// Overlapped) + Free is its length (Stage); the collectives appear in
// communication.json and communication_matrix.json per rank pair.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/e2e/csv_fields.h"
#include "tests/e2e/digits_case.h"
#include "tests/e2e/server_process.h"

namespace npu::testing {
namespace {

namespace fs = std::filesystem;
using Table = std::vector<std::map<std::string, std::string>>;

std::string Read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The CSV as rows by column name, after returning its header.
Table ReadCsv(const fs::path& p, std::vector<std::string>* header) {
  std::ifstream f(p);
  std::string line;
  std::getline(f, line);
  *header = CsvFields(line);
  Table rows;
  while (std::getline(f, line)) {
    const auto cells = CsvFields(line);
    EXPECT_EQ(cells.size(), header->size()) << p << ": " << line;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < cells.size() && i < header->size(); ++i) row[(*header)[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

int Npu(int port, const std::string& args, std::string* output) {
  const fs::path log = fs::temp_directory_path() / ("npu-prof-" + std::to_string(getpid()) + ".log");
  const std::string cmd = std::string(NPU_CLI_BIN) + " --target 127.0.0.1:" + std::to_string(port) + " " + args +
                          " >" + log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  *output = Read(log);
  fs::remove(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::vector<fs::path> RankFolders(const fs::path& dir) {
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().size() > 10 &&
        e.path().filename().string().rfind("_ascend_pt") == e.path().filename().string().size() - 10) {
      folders.push_back(e.path());
    }
  }
  std::sort(folders.begin(), folders.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string().find("_rank0_") != std::string::npos && b.filename().string().find("_rank0_") == std::string::npos;
  });
  return folders;
}

// The header holds each of `names`, in this order.
void ExpectColumnsInOrder(const std::vector<std::string>& header, const std::vector<std::string>& names) {
  size_t at = 0;
  for (const std::string& n : names) {
    auto it = std::find(header.begin() + static_cast<long>(at), header.end(), n);
    ASSERT_NE(it, header.end()) << n << " missing or out of order in " << absl::StrJoin(header, ",");
    at = static_cast<size_t>(it - header.begin());
  }
}

// op_statistic.csv against the kernel_details.csv beside it.
void ExpectStatisticsAddUp(const fs::path& out) {
  std::vector<std::string> kh, sh;
  const Table kernels = ReadCsv(out / "kernel_details.csv", &kh);
  const Table stats = ReadCsv(out / "op_statistic.csv", &sh);
  EXPECT_EQ(absl::StrJoin(sh, ","),
            "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)");
  ExpectColumnsInOrder(kh, {"Device_id", "Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)",
                            "Wait Time(us)", "Block Num", "Input Shapes", "Input Data Types", "Output Shapes",
                            "Output Data Types"});
  ASSERT_FALSE(kernels.empty());
  std::map<std::pair<std::string, std::string>, std::pair<int, double>> sums;
  for (const auto& k : kernels) {
    auto& s = sums[{k.at("Type"), k.at("Accelerator Core")}];
    ++s.first;
    s.second += std::stod(k.at("Duration(us)"));
  }
  ASSERT_EQ(stats.size(), sums.size());
  double ratio = 0;
  for (const auto& s : stats) {
    const auto& want = sums.at({s.at("OP Type"), s.at("Core Type")});
    EXPECT_EQ(std::stoi(s.at("Count")), want.first) << s.at("OP Type");
    EXPECT_NEAR(std::stod(s.at("Total Time(us)")), want.second, 1e-6 + 5e-4) << s.at("OP Type");
    EXPECT_LE(std::stod(s.at("Min Time(us)")), std::stod(s.at("Avg Time(us)")));
    EXPECT_LE(std::stod(s.at("Avg Time(us)")), std::stod(s.at("Max Time(us)")));
    ratio += std::stod(s.at("Ratio(%)"));
  }
  EXPECT_NEAR(ratio, 100.0, 0.01);
}

TEST(ProfilerFiles, NpuRunWritesTheProfilersLayout) {
  ServerProcess server;
  const fs::path dir = fs::temp_directory_path() / ("npu-prof-run-" + std::to_string(getpid()));
  std::string out;
  ASSERT_EQ(Npu(server.port(),
                "run " NPU_SOURCE_DIR "/examples/graphs/mlp.json --input x=" NPU_SOURCE_DIR
                "/examples/graphs/mlp_x.npy -o " + (dir / "out").string() + " --profile-dir " + (dir / "prof").string(),
                &out),
            0)
      << out;
  const auto folders = RankFolders(dir / "prof");
  ASSERT_EQ(folders.size(), 1u) << out;
  const fs::path o = folders[0] / "ASCEND_PROFILER_OUTPUT";
  for (const char* f : {"kernel_details.csv", "op_statistic.csv", "op_summary.csv", "trace_view.json"}) {
    EXPECT_TRUE(fs::is_regular_file(o / f)) << f;
  }
  EXPECT_TRUE(fs::is_regular_file(folders[0] / "profiler_info_0.json"));
  EXPECT_FALSE(fs::exists(o / "step_trace_time.csv")) << "a run is not a training step";
  ExpectStatisticsAddUp(o);
  google::protobuf::Struct trace;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(Read(o / "trace_view.json"), &trace).ok());
  fs::remove_all(dir);
}

TEST(ProfilerFiles, TwoDeviceTrainingAddsStepsAndCommunication) {
  ServerProcess server({"--devices=2"});
  const fs::path dir = fs::temp_directory_path() / ("npu-prof-train-" + std::to_string(getpid()));
  std::string out;
  ASSERT_EQ(Npu(server.port(),
                "train " + (DigitsCase() / "mlp.onnx").string() + " --data " + (DigitsCase() / "digits.npz").string() +
                    " --loss cross_entropy --optimizer adam --lr 0.01 --batch-size 64 --epochs 1 --devices npu:0,npu:1"
                    " --profile-dir " + dir.string(),
                &out),
            0)
      << out;
  const auto folders = RankFolders(dir);
  ASSERT_EQ(folders.size(), 2u) << out;
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const fs::path o = folders[rank] / "ASCEND_PROFILER_OUTPUT";
    ExpectStatisticsAddUp(o);
    std::vector<std::string> header;
    const Table steps = ReadCsv(o / "step_trace_time.csv", &header);
    EXPECT_EQ(absl::StrJoin(header, ","),
              "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
              "Communication(Not Overlapped and Exclude Receive),Preparing");
    ASSERT_GE(steps.size(), 20u);  // 23 steps of 64 rows
    for (const auto& s : steps) {
      const double computing = std::stod(s.at("Computing")), comm = std::stod(s.at("Communication(Not Overlapped)"));
      const double free = std::stod(s.at("Free")), stage = std::stod(s.at("Stage"));
      EXPECT_NEAR(computing + comm + free, stage, 1.5e-3) << "step " << s.at("Step");
      EXPECT_GT(computing, 0);
      EXPECT_GT(std::stod(s.at("Communication")), 0) << "DDP allreduces every step";
      EXPECT_GE(free, 0);
      EXPECT_EQ(s.at("Device_id"), std::to_string(rank));
    }
    google::protobuf::Struct comm, matrix;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(Read(o / "communication.json"), &comm).ok());
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(Read(o / "communication_matrix.json"), &matrix).ok());
    const auto& step1 = comm.fields().at("step1").struct_value().fields().at("collective").struct_value().fields();
    ASSERT_FALSE(step1.empty());
    for (const auto& [op, value] : step1) {
      const auto& info = value.struct_value().fields();
      const auto& time = info.at("Communication Time Info").struct_value().fields();
      for (const char* k : {"Start Timestamp(us)", "Elapse Time(ms)", "Transit Time(ms)", "Wait Time(ms)",
                            "Synchronization Time(ms)", "Idle Time(ms)", "Wait Time Ratio",
                            "Synchronization Time Ratio"}) {
        EXPECT_TRUE(time.count(k)) << op << ": " << k;
      }
      const auto& hccs = info.at("Communication Bandwidth Info").struct_value().fields().at("HCCS").struct_value().fields();
      for (const char* k : {"Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)"}) EXPECT_TRUE(hccs.count(k)) << k;
    }
    const auto& pairs = matrix.fields().at("step1").struct_value().fields().at("collective").struct_value().fields();
    ASSERT_FALSE(pairs.empty());
    const std::string link = rank == 0 ? "0-1" : "1-0";
    for (const auto& [op, value] : pairs) {
      const auto& entry = value.struct_value().fields().at(link).struct_value().fields();
      EXPECT_EQ(entry.at("Transport Type").string_value(), "HCCS") << op;
      for (const char* k : {"Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)", "Op Name"}) {
        EXPECT_TRUE(entry.count(k)) << op << ": " << k;
      }
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace npu::testing
