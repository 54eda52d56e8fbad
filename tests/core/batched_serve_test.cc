// Dynamic batching through the core's one entry (core::Serve), as every
// frontend reaches it: requests of mixed batch sizes to an MLP with random
// weights are merged into device runs of the preferred size, and each
// request's rows are bit for bit what the same model answers it run alone;
// every response says how it was executed, and a batch's requests share one
// profile. A request past max_batch_size, or whose inputs disagree on the
// batch, is refused by name.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "client/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/serve.h"
#include "tests/core/core_test_support.h"

namespace npu::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int64_t kIn = 64, kHidden = 96, kOut = 40;

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::string MlpJson(std::mt19937& rng) {
  client::GraphBuilder g("mlp");
  auto x = g.Input("x", v1::FLOAT32, {-1, kIn});
  auto w1 = g.Constant("w1", testing::FloatProto(Random(kIn * kHidden, rng), {kIn, kHidden}));
  auto b1 = g.Constant("b1", testing::FloatProto(Random(kHidden, rng), {kHidden}));
  auto w2 = g.Constant("w2", testing::FloatProto(Random(kHidden * kOut, rng), {kHidden, kOut}));
  auto b2 = g.Constant("b2", testing::FloatProto(Random(kOut, rng), {kOut}));
  g.Output(g.Add(g.MatMul(g.Relu(g.Add(g.MatMul(x, w1), b1)), w2), b2), "y");
  return testing::GraphJson(g.Build());
}

using testing::WriteFile;

class BatchedServeTest : public ::testing::Test {
 protected:
  BatchedServeTest() : state_(1, device::PresetByName("ascend910").value(), device::DeviceOptions{}, ServerLimits{}) {
    char dir[] = "/tmp/npu-batch-test.XXXXXX";
    dir_ = mkdtemp(dir);
    std::mt19937 rng(7);
    const std::string mlp = MlpJson(rng);
    WriteFile(dir_ / "mlp" / "1" / "graph.json", mlp);
    // A delay far past the time the test takes to send: batches form by size.
    WriteFile(dir_ / "mlp" / "config.pbtxt",
          "max_batch_size: 16\n"
          "dynamic_batching { preferred_batch_size: [ 16 ] max_queue_delay_microseconds: 1000000 }\n");
    WriteFile(dir_ / "alone" / "1" / "graph.json", mlp);  // the same model, unbatched
    state_.models.SetRepository(
        ModelRepository::Open(dir_.string(), device::PresetByName("ascend910").value(), state_.plan_limits(), {})
            .value());
  }
  ~BatchedServeTest() override { fs::remove_all(dir_); }

  Request Infer(const std::string& model, const graph::HostTensor& x) {
    Request r;
    r.method = "test";
    r.target = ModelRef{model, ""};
    r.inputs.push_back({"x", x, ""});
    r.least_busy_device = true;
    r.profile = true;
    return r;
  }

  // Serves every request at once and waits for all the answers.
  std::vector<absl::StatusOr<Response>> ServeAll(std::vector<Request> requests) {
    std::vector<absl::StatusOr<Response>> out(requests.size(), absl::UnknownError("no answer"));
    Mutex mu;
    CondVar cv;
    size_t answered = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
      Serve(state_, std::move(requests[i]), [&, i](absl::StatusOr<Response> resp) {
        MutexLock lock(&mu);
        out[i] = std::move(resp);
        ++answered;
        cv.SignalAll();
      });
    }
    MutexLock lock(&mu);
    while (answered < out.size()) cv.Wait(&mu);
    return out;
  }

  fs::path dir_;
  ServerState state_;
};

TEST_F(BatchedServeTest, EachRequestsRowsAreTheBitsItGetsAlone) {
  // 16 + 16 + 7 rows: two preferred batches, then the rest after the delay.
  const std::vector<int64_t> rows = {1, 3, 2, 5, 1, 4, 2, 1, 3, 2, 1, 4, 3, 5, 2};
  const std::vector<int64_t> batch_of = {16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 7, 7};
  const std::vector<int64_t> requests_of = {6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 2, 2};
  std::mt19937 rng(11);
  std::vector<graph::HostTensor> xs;
  std::vector<Request> batched, alone;
  for (int64_t r : rows) {
    graph::HostTensor x = graph::HostTensor::Allocate({v1::FLOAT32, {r, kIn}});
    const std::vector<float> v = Random(r * kIn, rng);
    std::memcpy(x.mutable_data(), v.data(), x.bytes());
    batched.push_back(Infer("mlp", x));
    alone.push_back(Infer("alone", x));
    xs.push_back(std::move(x));
  }
  const auto got = ServeAll(std::move(batched));
  std::vector<absl::StatusOr<Response>> want;
  for (Request& r : alone) want.push_back(std::move(ServeAll({std::move(r)})[0]));

  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "request " << i << " of " << rows[i] << " rows");
    ASSERT_TRUE(got[i].ok()) << got[i].status();
    ASSERT_TRUE(want[i].ok()) << want[i].status();
    const graph::HostTensor& y = got[i]->outputs.at(0).tensor;
    const graph::HostTensor& ref = want[i]->outputs.at(0).tensor;
    ASSERT_EQ(y.type().shape, (graph::Shape{rows[i], kOut}));
    ASSERT_EQ(ref.type().shape, y.type().shape);
    EXPECT_EQ(std::memcmp(y.data(), ref.data(), y.bytes()), 0) << "rows differ from the unbatched run";
    const Execution& e = got[i]->execution;
    EXPECT_EQ(e.batch_size, batch_of[i]);
    EXPECT_EQ(e.requests, requests_of[i]);
    EXPECT_GT(e.queue.count(), 0);
    EXPECT_GT(e.compute.count(), 0);
    EXPECT_EQ(got[i]->model_name, "mlp");
    EXPECT_EQ(got[i]->model_version, "1");
    EXPECT_EQ(want[i]->execution.batch_size, 1);  // the unbatched model reports its run alone
    EXPECT_EQ(want[i]->execution.requests, 1);
  }
  // One run, one profile: the requests of a batch hold the same one.
  ASSERT_TRUE(got[0]->profile != nullptr);
  EXPECT_TRUE(got[0]->profile == got[5]->profile);
  EXPECT_TRUE(got[0]->profile != got[6]->profile);
}

TEST_F(BatchedServeTest, RequestsThatCannotBeBatchedAreRefusedByName) {
  graph::HostTensor big = graph::HostTensor::Allocate({v1::FLOAT32, {17, kIn}});
  std::memset(big.mutable_data(), 0, big.bytes());
  auto refused = ServeAll({Infer("mlp", big)});
  EXPECT_EQ(refused[0].status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused[0].status().message(), HasSubstr("batch size 17"));
  EXPECT_THAT(refused[0].status().message(), HasSubstr("max_batch_size 16"));
  // A debug run keeps every intermediate of its own: it runs alone, at once.
  graph::HostTensor one = graph::HostTensor::Allocate({v1::FLOAT32, {1, kIn}});
  std::memset(one.mutable_data(), 0, one.bytes());
  Request debug = Infer("mlp", one);
  debug.debug = true;
  auto ran = ServeAll({std::move(debug)});
  ASSERT_TRUE(ran[0].ok()) << ran[0].status();
  EXPECT_EQ(ran[0]->execution.batch_size, 1);
  EXPECT_FALSE(ran[0]->intermediates.empty());
}

}  // namespace
}  // namespace npu::core
