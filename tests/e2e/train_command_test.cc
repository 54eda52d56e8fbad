// `npu train` against a real npu-server: scikit-learn's digits (an MLP
// exported from torch) under apex O2 with a dynamic loss scale on one device
// and on four, the metrics CSV, the saved ONNX model run by `npu run`, a
// dynamic scale starting too high, and usage errors.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "client/npy.h"
#include "gtest/gtest.h"
#include "tests/e2e/server_process.h"
#include "tests/generated_dir.h"

namespace npu::testing {
namespace {

namespace fs = std::filesystem;

fs::path Digits() {
  static const fs::path dir = GeneratedDir(fs::path(NPU_SOURCE_DIR) / "tests/train/make_digits_case.py",
                                           fs::path(NPU_BINARY_DIR) / "digits_case");
  return dir;
}

struct Cli {
  int rc;
  std::string out;
};

Cli Npu(int port, const std::string& args) {
  const fs::path log = fs::temp_directory_path() / ("npu-train-" + std::to_string(getpid()) + ".log");
  const std::string cmd = std::string(NPU_CLI_BIN) + " --target 127.0.0.1:" + std::to_string(port) + " " + args +
                          " >" + log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(log);
  Cli r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, std::string(std::istreambuf_iterator<char>(f), {})};
  fs::remove(log);
  return r;
}

// The CSV's rows as numbers, after checking its header.
std::vector<std::vector<double>> ReadMetrics(const fs::path& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "epoch,train_loss,val_loss,val_accuracy,loss_scale,skipped_steps,device_time_us,host_time_ms");
  std::vector<std::vector<double>> rows;
  while (std::getline(f, line)) {
    std::vector<double> row;
    for (absl::string_view cell : absl::StrSplit(line, ',')) {
      double v = 0;
      EXPECT_TRUE(absl::SimpleAtod(cell, &v)) << line;
      row.push_back(v);
    }
    EXPECT_EQ(row.size(), 8u) << line;
    rows.push_back(row);
  }
  return rows;
}

// `npu train` on the digits with these options, `extra` ("--key value ...")
// replacing or adding to them.
std::string Args(const std::string& extra) {
  std::vector<std::pair<std::string, std::string>> options = {
      {"--data", (Digits() / "digits.npz").string()}, {"--loss", "cross_entropy"}, {"--optimizer", "adam"},
      {"--lr", "0.01"}, {"--batch-size", "64"}, {"--epochs", "5"}, {"--amp", "O2"},
      {"--loss-scale", "dynamic"}, {"--seed", "3"}};
  const std::vector<std::string> words = absl::StrSplit(extra, ' ', absl::SkipEmpty());
  for (size_t i = 0; i + 1 < words.size(); i += 2) {
    auto it = std::find_if(options.begin(), options.end(), [&](const auto& o) { return o.first == words[i]; });
    if (it != options.end()) {
      it->second = words[i + 1];
    } else {
      options.emplace_back(words[i], words[i + 1]);
    }
  }
  std::string args = "train " + (Digits() / "mlp.onnx").string();
  for (const auto& [key, value] : options) args += " " + key + " " + value;
  return args;
}

TEST(TrainCommandTest, DigitsReach95PercentOnOneAndFourDevicesAndTheSavedModelRuns) {
  ASSERT_FALSE(Digits().empty());
  ServerProcess server({"--devices=4"});
  const fs::path dir = fs::temp_directory_path() / ("npu-train-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const Cli one = Npu(server.port(), Args("--metrics-csv " + (dir / "one.csv").string() + " --save-onnx " +
                                          (dir / "trained.onnx").string()));
  ASSERT_EQ(one.rc, 0) << one.out;
  EXPECT_EQ(std::count(one.out.begin(), one.out.end(), '\n'), 5) << one.out;  // one line per epoch
  EXPECT_NE(one.out.find("epoch 5/5"), std::string::npos) << one.out;
  const Cli four = Npu(server.port(), Args("--devices npu:0,npu:1,npu:2,npu:3 --metrics-csv " + (dir / "four.csv").string()));
  ASSERT_EQ(four.rc, 0) << four.out;
  const auto a = ReadMetrics(dir / "one.csv"), b = ReadMetrics(dir / "four.csv");
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(b.size(), 5u);
  EXPECT_GE(a.back()[3], 0.95) << one.out;
  EXPECT_GE(b.back()[3], 0.95) << four.out;
  for (size_t e = 0; e < 5; ++e) {
    // The same global batches: four shards' gradients allreduced follow one
    // device's within rounding (fp16 model, per-shard Cube sums).
    EXPECT_NEAR(b[e][1], a[e][1], 2e-3 * a[e][1]) << "train loss, epoch " << e + 1;
    EXPECT_NEAR(b[e][3], a[e][3], 0.01) << "validation accuracy, epoch " << e + 1;
    EXPECT_GT(a[e][6], 0) << "modeled device time";
  }
  // The saved model is torch's ONNX with the trained weights: `npu run` classifies the held-out rows.
  const Cli run = Npu(server.port(), "run " + (dir / "trained.onnx").string() + " --input x=" +
                                         (Digits() / "x.npy").string() + " -o " + (dir / "out").string());
  ASSERT_EQ(run.rc, 0) << run.out;
  auto logits = client::ReadNpy((dir / "out" / "logits.npy").string());
  auto labels = client::ReadNpy((Digits() / "y.npy").string());
  ASSERT_TRUE(logits.ok() && labels.ok());
  const int64_t rows = labels->shape(0), held_out = rows - rows * 8 / 10;
  const float* l = reinterpret_cast<const float*>(logits->data().data());
  const int64_t* y = reinterpret_cast<const int64_t*>(labels->data().data());
  int64_t correct = 0;
  for (int64_t i = rows - held_out; i < rows; ++i) correct += std::max_element(l + i * 10, l + i * 10 + 10) - (l + i * 10) == y[i];
  EXPECT_GE(static_cast<double>(correct) / static_cast<double>(held_out), 0.95);
  fs::remove_all(dir);
}

// apex's dynamic scaler started at 2^24: the first steps overflow fp16, are
// skipped and halve the scale until the gradients fit; training proceeds.
TEST(TrainCommandTest, ADynamicScaleTooHighSkipsStepsAndComesDown) {
  ASSERT_FALSE(Digits().empty());
  ServerProcess server;
  const fs::path csv = fs::temp_directory_path() / ("npu-train-scale-" + std::to_string(getpid()) + ".csv");
  const Cli r = Npu(server.port(), Args("--loss-scale dynamic:16777216 --metrics-csv " + csv.string()));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto rows = ReadMetrics(csv);
  fs::remove(csv);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_GT(rows[0][5], 0) << "skipped steps in epoch 1: " << r.out;
  EXPECT_LT(rows[0][4], 16777216) << r.out;
  EXPECT_GE(rows.back()[3], 0.9) << r.out;
}

TEST(TrainCommandTest, BadArgumentsAreUsageErrorsNamingTheArgument) {
  ASSERT_FALSE(Digits().empty());
  ServerProcess server;
  struct Case {
    std::string extra, culprit;
  } cases[] = {
      {"--optimizer rmsprop", "--optimizer rmsprop"},
      {"--amp O3", "--amp O3"},
      {"--loss-scale lots", "--loss-scale lots"},
      {"--y-key labels", "no array \"labels\""},
      {"--batch-size 0", "--batch-size 0"},
      {"--val-split 1", "--val-split 1"},
  };
  for (const Case& c : cases) {
    const Cli r = Npu(server.port(), Args(c.extra));
    EXPECT_EQ(r.rc, 2) << c.extra << ": " << r.out;
    EXPECT_NE(r.out.find(c.culprit), std::string::npos) << c.extra << ": " << r.out;
  }
  // A server-side refusal (a device the server does not have) is exit 1, by name.
  const Cli r = Npu(server.port(), Args("--devices npu:7"));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("npu:7"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace npu::testing
