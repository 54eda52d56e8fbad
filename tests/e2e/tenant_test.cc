// Bearer-token tenants, isolation between them, per-tenant device memory
// quotas and idle handle expiry, against a real npu-server.
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/server_process.h"

namespace npu::testing {
namespace {

using namespace std::chrono_literals;

class TokenFile {
 public:
  explicit TokenFile(const std::string& text) {
    path_ = std::filesystem::temp_directory_path() / ("npu_tokens_" + std::to_string(std::random_device{}()));
    std::ofstream(path_) << text;
  }
  ~TokenFile() { std::filesystem::remove(path_); }
  std::string flag() const { return "--auth_tokens=" + path_.string(); }

 private:
  std::filesystem::path path_;
};

// One tenant's view of the server.
struct Tenant {
  Tenant(std::shared_ptr<grpc::Channel> channel, std::string token)
      : token(std::move(token)),
        runtime(v1::RuntimeService::NewStub(channel)),
        memory(v1::MemoryService::NewStub(channel)),
        devices(v1::DeviceService::NewStub(channel)) {}

  grpc::Status Upload(const v1::Tensor& t, v1::TensorHandle* handle) {
    auto ctx = Ctx(20s, token);
    auto writer = memory->Upload(ctx.get(), handle);
    v1::UploadChunk chunk;
    chunk.mutable_header()->set_device("npu:0");
    chunk.mutable_header()->mutable_type()->set_dtype(t.dtype());
    *chunk.mutable_header()->mutable_type()->mutable_shape() = t.shape();
    chunk.set_data(t.data());
    writer->Write(chunk);
    writer->WritesDone();
    return writer->Finish();
  }
  grpc::Status Download(const std::string& handle, std::string* data = nullptr) {
    v1::DownloadRequest req;
    req.set_handle(handle);
    auto ctx = Ctx(20s, token);
    auto reader = memory->Download(ctx.get(), req);
    v1::DownloadChunk chunk;
    while (reader->Read(&chunk)) {
      if (data) data->append(chunk.data());
    }
    return reader->Finish();
  }
  grpc::Status Free(const std::string& handle) {
    v1::FreeRequest req;
    req.set_handle(handle);
    v1::FreeResponse resp;
    return memory->Free(Ctx(20s, token).get(), req, &resp);
  }
  grpc::Status Register(std::string* id) {
    v1::RegisterGraphRequest req;
    *req.mutable_graph() = AddGraph();
    v1::RegisterGraphResponse resp;
    grpc::Status st = runtime->RegisterGraph(Ctx(20s, token).get(), req, &resp);
    *id = resp.graph_id();
    return st;
  }
  grpc::Status RunById(const std::string& id) {
    v1::RunRequest req = AddRun();
    req.set_graph_id(id);
    v1::RunResponse resp;
    return runtime->Run(Ctx(20s, token).get(), req, &resp);
  }
  grpc::Status ListDevices() {
    v1::ListDevicesResponse resp;
    return devices->ListDevices(Ctx(20s, token).get(), {}, &resp);
  }
  int HandleCount() {
    v1::ListHandlesResponse resp;
    EXPECT_TRUE(memory->List(Ctx(20s, token).get(), {}, &resp).ok());
    return resp.handles_size();
  }

  std::string token;
  std::unique_ptr<v1::RuntimeService::Stub> runtime;
  std::unique_ptr<v1::MemoryService::Stub> memory;
  std::unique_ptr<v1::DeviceService::Stub> devices;
};

TEST(Tenants, CallsWithoutAKnownTokenAreUnauthenticated) {
  TokenFile tokens("# test tokens\ntok-alice alice\ntok-bob bob\n");
  ServerProcess server({tokens.flag(), "--log_level=off"});
  auto channel = TestChannel(server.target());
  for (const std::string token : {"", "tok-mallory"}) {
    SCOPED_TRACE(token);
    Tenant anonymous(channel, token);
    std::string id;
    EXPECT_EQ(anonymous.Register(&id).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(anonymous.ListDevices().error_code(), grpc::StatusCode::UNAUTHENTICATED);
    v1::TensorHandle h;
    grpc::Status st = anonymous.Upload(Float32({4}, {1, 2, 3, 4}), &h);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(st.error_message().find("tok-"), std::string::npos) << "the token must not be echoed";
  }
  EXPECT_TRUE(Tenant(channel, "tok-alice").ListDevices().ok());
  // Health stays open: orchestrators probe it without credentials.
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckResponse h;
  EXPECT_TRUE(health->Check(Ctx().get(), {}, &h).ok());
}

TEST(Tenants, HandlesAndGraphsOfOneTenantAreInvisibleToAnother) {
  TokenFile tokens("tok-alice alice\ntok-bob bob\n");
  ServerProcess server({tokens.flag(), "--log_level=off"});
  auto channel = TestChannel(server.target());
  Tenant alice(channel, "tok-alice"), bob(channel, "tok-bob");

  v1::TensorHandle handle;
  ASSERT_TRUE(alice.Upload(Float32({4}, {1, 2, 3, 4}), &handle).ok());
  EXPECT_EQ(handle.handle().size(), 32u) << "a random 128-bit id in hex";
  std::string graph_id;
  ASSERT_TRUE(alice.Register(&graph_id).ok());

  // Bob gets exactly the answer he gets for ids that never existed.
  const std::string never = "0123456789abcdef0123456789abcdef";
  for (const auto& [h, expect_of] : {std::pair{handle.handle(), handle.handle()}, std::pair{never, never}}) {
    grpc::Status st = bob.Download(h);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(st.error_message(), "handle \"" + expect_of + "\" not found");
    st = bob.Free(h);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(st.error_message(), "handle \"" + expect_of + "\" not found");
  }
  v1::RunRequest req = AddRun();
  req.mutable_inputs(0)->set_handle(handle.handle());
  v1::RunResponse resp;
  grpc::Status st = bob.runtime->Run(Ctx(20s, bob.token).get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "input \"x\": handle \"" + handle.handle() + "\" not found");
  st = bob.RunById(graph_id);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "graph id \"" + graph_id + "\" not found");
  st = bob.RunById("g-never");
  EXPECT_EQ(st.error_message(), "graph id \"g-never\" not found");
  EXPECT_EQ(bob.HandleCount(), 0);

  // Alice still has both.
  std::string data;
  EXPECT_TRUE(alice.Download(handle.handle(), &data).ok());
  EXPECT_EQ(data.size(), 16u);
  EXPECT_TRUE(alice.RunById(graph_id).ok());
  EXPECT_EQ(alice.HandleCount(), 1);
}

TEST(Tenants, DeviceMemoryQuotaIsPerTenant) {
  TokenFile tokens("tok-alice alice\ntok-bob bob\n");
  ServerProcess server({tokens.flag(), "--tenant_memory_quota_bytes=1024", "--log_level=off"});
  auto channel = TestChannel(server.target());
  Tenant alice(channel, "tok-alice"), bob(channel, "tok-bob");

  v1::TensorHandle first, refused, bobs;
  ASSERT_TRUE(alice.Upload(Float32({128}, std::vector<float>(128, 1)), &first).ok());  // 512 B
  grpc::Status st = alice.Upload(Float32({192}, std::vector<float>(192, 1)), &refused);  // 768 B
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(st.error_message().find("tenant \"alice\" device memory quota: 768 bytes requested, 512 of 1024 free"),
            std::string::npos)
      << st.error_message();
  // Bob has his own quota; outputs kept on the device count too.
  EXPECT_TRUE(bob.Upload(Float32({192}, std::vector<float>(192, 1)), &bobs).ok());
  // Freeing gives Alice her room back.
  ASSERT_TRUE(alice.Free(first.handle()).ok());
  EXPECT_TRUE(alice.Upload(Float32({192}, std::vector<float>(192, 1)), &refused).ok());
}

TEST(Handles, IdleHandlesExpire) {
  ServerProcess server({"--handle_idle_timeout_s=0.2", "--log_level=off"});
  auto channel = TestChannel(server.target());
  Tenant anyone(channel, "");
  v1::TensorHandle handle;
  ASSERT_TRUE(anyone.Upload(Float32({4}, {1, 2, 3, 4}), &handle).ok());
  EXPECT_TRUE(anyone.Download(handle.handle()).ok());
  std::this_thread::sleep_for(1s);  // five idle periods
  grpc::Status st = anyone.Download(handle.handle());
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(anyone.HandleCount(), 0);
  // Its memory went back to the device.
  auto devices = v1::DeviceService::NewStub(channel);
  v1::ServerStats stats;
  ASSERT_TRUE(devices->GetStats(Ctx().get(), {}, &stats).ok());
  EXPECT_EQ(stats.devices(0).memory_used_bytes(), 0u);
}

}  // namespace
}  // namespace npu::testing
