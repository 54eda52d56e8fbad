// The client against small in-process fakes of the services (not npu-server:
// its end-to-end tests live in tests/e2e). Checks what only a wire shows:
// upload chunking, download reassembly, auth metadata, error pass-through,
// and `npu run` from files to files.
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "client/cli/cli_status.h"
#include "client/cli/health_command.h"
#include "client/cli/run_command.h"
#include "client/client.h"
#include "client/graph_builder.h"
#include "client/graph_json.h"
#include "client/host_tensor.h"
#include "client/npy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace npu::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScratchDir;
using testing::WriteFileBytes;

std::string AuthorizationOf(const grpc::ServerContext& context) {
  auto it = context.client_metadata().find("authorization");
  return it == context.client_metadata().end() ? "" : std::string(it->second.data(), it->second.size());
}

class FakeMemory final : public npu::v1::MemoryService::Service {
 public:
  grpc::Status Upload(grpc::ServerContext* context, grpc::ServerReader<npu::v1::UploadChunk>* reader,
                      npu::v1::TensorHandle* handle) override {
    std::lock_guard<std::mutex> lock(mu_);
    authorization = AuthorizationOf(*context);
    npu::v1::UploadChunk chunk;
    chunk_sizes.clear();
    headers_seen.clear();
    stored.Clear();
    while (reader->Read(&chunk)) {
      headers_seen.push_back(chunk.has_header());
      chunk_sizes.push_back(chunk.data().size());
      if (chunk.has_header()) {
        stored.set_dtype(chunk.header().type().dtype());
        *stored.mutable_shape() = chunk.header().type().shape();
        handle->set_device(chunk.header().device());
      }
      stored.mutable_data()->append(chunk.data());
    }
    handle->set_handle("h1");
    handle->set_bytes(stored.data().size());
    return grpc::Status::OK;
  }

  grpc::Status Download(grpc::ServerContext*, const npu::v1::DownloadRequest* request,
                        grpc::ServerWriter<npu::v1::DownloadChunk>* writer) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (request->handle() != "h1") return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such handle");
    const size_t chunk_bytes = 100000;  // not a divisor of the size, on purpose
    size_t offset = 0;
    bool first = true;
    while (first || offset < stored.data().size()) {
      npu::v1::DownloadChunk chunk;
      if (first) {
        chunk.mutable_info()->set_handle("h1");
        chunk.mutable_info()->mutable_type()->set_dtype(stored.dtype());
        *chunk.mutable_info()->mutable_type()->mutable_shape() = stored.shape();
        chunk.mutable_info()->set_bytes(stored.data().size() + lie_about_size);
      }
      const size_t n = std::min(chunk_bytes, stored.data().size() - offset);
      chunk.set_data(stored.data().substr(offset, n));
      offset += n;
      first = false;
      writer->Write(chunk);
    }
    return grpc::Status::OK;
  }

  std::mutex mu_;
  std::string authorization;
  std::vector<size_t> chunk_sizes;
  std::vector<bool> headers_seen;
  npu::v1::Tensor stored;
  uint64_t lie_about_size = 0;
};

// Registers graphs (INVALID_ARGUMENT for graph "bad"), never finds one by
// hash; runs echo the first input to every graph output.
class FakeRuntime final : public npu::v1::RuntimeService::Service {
 public:
  grpc::Status FindGraph(grpc::ServerContext*, const npu::v1::FindGraphRequest*,
                         npu::v1::RegisterGraphResponse*) override {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such graph");
  }
  grpc::Status RegisterGraph(grpc::ServerContext*, const npu::v1::RegisterGraphRequest* request,
                             npu::v1::RegisterGraphResponse* response) override {
    if (request->graph().name() == "bad") {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "node \"fc1\" (MatMul): inner dimensions 768 and 512 differ");
    }
    std::lock_guard<std::mutex> lock(mu_);
    graph_ = request->graph();
    response->set_graph_id("g-fake");
    *response->mutable_inputs() = graph_.inputs();
    for (const std::string& name : graph_.outputs()) response->add_outputs()->set_name(name);
    return grpc::Status::OK;
  }
  grpc::Status Run(grpc::ServerContext*, const npu::v1::RunRequest* request,
                   npu::v1::RunResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_options = request->options();
    const npu::v1::Tensor& input = request->inputs(0).tensor();
    for (const std::string& name : graph_.outputs()) {
      npu::v1::RunOutput* output = response->add_outputs();
      output->set_name(name);
      *output->mutable_tensor() = input;
    }
    if (request->options().profile()) {
      response->mutable_profile()->set_clock_mhz(1000);
      response->mutable_profile()->set_model_version("fake");
      npu::v1::NodeProfile* node = response->mutable_profile()->add_nodes();
      node->set_name("Relu_0");
      node->set_op_type("Relu");
      node->set_end_cycle(1234);
    }
    return grpc::Status::OK;
  }
  npu::v1::Graph graph_;
  std::mutex mu_;
  npu::v1::RunOptions last_options;
};

class FakeServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&memory_);
    builder.RegisterService(&runtime_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ClientOptions options;
    options.timeout = absl::Seconds(30);
    options.bearer_token = "tok-123";
    client_ = *Client::Connect("127.0.0.1:" + std::to_string(port), options);
  }
  void TearDown() override { server_->Shutdown(); }

  FakeMemory memory_;
  FakeRuntime runtime_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Client> client_;
};

npu::v1::Tensor BigTensor() {
  // 2.5 MiB of float32, with a pattern so misordered chunks would show.
  std::vector<float> values(655360);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 9973);
  return *MakeFloatTensor(npu::v1::FLOAT32, {640, 1024}, values);
}

TEST_F(FakeServerTest, UploadSendsHeaderFirstThenMebibyteChunks) {
  const npu::v1::Tensor tensor = BigTensor();
  absl::StatusOr<npu::v1::TensorHandle> handle = client_->Upload(tensor, "npu:0");
  ASSERT_TRUE(handle.ok()) << handle.status();
  EXPECT_EQ(handle->handle(), "h1");
  EXPECT_EQ(handle->device(), "npu:0");
  std::lock_guard<std::mutex> lock(memory_.mu_);  // written on the server's thread
  EXPECT_THAT(memory_.chunk_sizes, ElementsAre(1 << 20, 1 << 20, (1 << 19)));
  EXPECT_THAT(memory_.headers_seen, ElementsAre(true, false, false));
  EXPECT_EQ(memory_.stored.data(), tensor.data());
  EXPECT_EQ(memory_.authorization, "Bearer tok-123");
}

TEST_F(FakeServerTest, EmptyTensorUploadStillSendsItsHeader) {
  npu::v1::Tensor empty;
  empty.set_dtype(npu::v1::FLOAT16);
  empty.add_shape(0);
  ASSERT_TRUE(client_->Upload(empty).ok());
  std::lock_guard<std::mutex> lock(memory_.mu_);
  EXPECT_THAT(memory_.headers_seen, ElementsAre(true));
  EXPECT_EQ(memory_.stored.shape(0), 0);
}

TEST_F(FakeServerTest, DownloadReassemblesChunks) {
  const npu::v1::Tensor tensor = BigTensor();
  ASSERT_TRUE(client_->Upload(tensor).ok());
  absl::StatusOr<npu::v1::Tensor> back = client_->Download("h1");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->SerializeAsString(), tensor.SerializeAsString());

  EXPECT_EQ(client_->Download("nope").status().code(), absl::StatusCode::kNotFound);

  {
    std::lock_guard<std::mutex> lock(memory_.mu_);
    memory_.lie_about_size = 3;
  }
  absl::StatusOr<npu::v1::Tensor> short_read = client_->Download("h1");
  EXPECT_EQ(short_read.status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(FakeServerTest, HealthReportsServing) {
  std::ostringstream out;
  absl::StatusOr<bool> serving = cli::RunHealthCommand(*client_, out);
  ASSERT_TRUE(serving.ok()) << serving.status();
  EXPECT_TRUE(*serving);
  EXPECT_EQ(out.str(), "SERVING\n");
}

TEST_F(FakeServerTest, UnimplementedServiceKeepsItsCode) {
  EXPECT_EQ(client_->ListDevices().status().code(), absl::StatusCode::kUnimplemented);
}

TEST_F(FakeServerTest, NpuRunFromFilesToFiles) {
  ScratchDir dir;
  GraphBuilder g("relu");
  Value x = g.Input("x", npu::v1::FLOAT16, {2, 2});
  g.Output(g.Relu(x), "act/out:0");
  WriteFileBytes(dir.File("g.json"), *GraphToJson(g.Build()));
  const npu::v1::Tensor input =
      *MakeFloatTensor(npu::v1::FLOAT16, {2, 2}, std::vector<float>{1, -2, 3, -4});
  ASSERT_TRUE(WriteNpy(dir.File("x.npy"), input).ok());

  cli::RunCommandArgs args;
  args.graph_path = dir.File("g.json");
  args.inputs = {"x=" + dir.File("x.npy")};
  args.output_dir = dir.File("out");
  args.device = "cuda:0";
  args.profile = true;
  std::ostringstream out, notices;
  absl::Status status = cli::RunRunCommand(*client_, args, out, notices);
  ASSERT_TRUE(status.ok()) << status;
  std::lock_guard<std::mutex> lock(runtime_.mu_);
  EXPECT_EQ(runtime_.last_options.device(), "npu:0");
  EXPECT_TRUE(runtime_.last_options.profile());
  EXPECT_THAT(notices.str(), HasSubstr("note: cuda:0 mapped to npu:0"));
  EXPECT_THAT(notices.str(), HasSubstr("written as act_out_0.npy"));
  EXPECT_THAT(out.str(), HasSubstr("act/out:0: float16 [2, 2]"));
  EXPECT_THAT(out.str(), HasSubstr("Relu_0"));
  EXPECT_THAT(out.str(), HasSubstr("1.234"));  // 1234 cycles at 1000 MHz
  absl::StatusOr<npu::v1::Tensor> written = ReadNpy(dir.File("out/act_out_0.npy"));
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->SerializeAsString(), input.SerializeAsString());
}

TEST_F(FakeServerTest, ServerErrorsPassThroughWithExitOne) {
  ScratchDir dir;
  GraphBuilder g("bad");
  Value x = g.Input("x", npu::v1::FLOAT16, {1});
  g.Output(g.Relu(x));
  WriteFileBytes(dir.File("g.json"), *GraphToJson(g.Build()));
  ASSERT_TRUE(WriteNpy(dir.File("x.npy"),
                       *MakeFloatTensor(npu::v1::FLOAT16, {1}, std::vector<float>{1}))
                  .ok());
  cli::RunCommandArgs args;
  args.graph_path = dir.File("g.json");
  args.inputs = {"x=" + dir.File("x.npy")};
  args.output_dir = dir.File("out");
  std::ostringstream out, notices, err;
  absl::Status status = cli::RunRunCommand(*client_, args, out, notices);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cli::ReportError(status, err), cli::kExitServerError);
  EXPECT_EQ(err.str(),
            "npu: error: INVALID_ARGUMENT: node \"fc1\" (MatMul): inner dimensions 768 and 512 "
            "differ\n");
}

}  // namespace
}  // namespace npu::client
