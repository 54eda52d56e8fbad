// A connection to an npu-server: devices, device memory, graphs and runs.
//
// Every method returns absl::Status / StatusOr; a server error keeps its gRPC
// code and message. A Client is safe to use from several threads at once.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/client_options.h"
#include "client/model_file.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "npu/v1/device.grpc.pb.h"
#include "npu/v1/memory.grpc.pb.h"
#include "npu/v1/runtime.grpc.pb.h"
#include "npu/v1/training.grpc.pb.h"

namespace grpc {
class Channel;
class ClientContext;
}  // namespace grpc

namespace npu::client {

using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

class Client {
 public:
  // Upload and RegisterModel send bytes in chunks of at most this size (less
  // when the send limit is lower).
  static constexpr size_t kUploadChunkBytes = size_t{1} << 20;

  // Builds the channel; does not wait for the server (the first call does).
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const std::string& target,
                                                         const ClientOptions& options = {});

  const std::string& target() const { return target_; }

  absl::StatusOr<npu::v1::ListDevicesResponse> ListDevices();
  absl::StatusOr<npu::v1::DeviceInfo> GetDevice(const std::string& device);
  absl::StatusOr<npu::v1::ServerStats> GetStats();

  // grpc.health.v1 Check; "" asks about the server as a whole.
  absl::StatusOr<ServingStatus> Health(const std::string& service = "");

  // Client-streaming upload; the first chunk carries the header.
  absl::StatusOr<npu::v1::TensorHandle> Upload(const npu::v1::Tensor& tensor,
                                               const std::string& device = "npu:0");
  // Server-streaming download, concatenated into one tensor.
  absl::StatusOr<npu::v1::Tensor> Download(const std::string& handle);
  absl::Status Free(const std::string& handle);
  absl::StatusOr<npu::v1::ListHandlesResponse> ListHandles();

  absl::StatusOr<npu::v1::RegisterGraphResponse> RegisterGraph(
      const npu::v1::RegisterGraphRequest& request);
  // Registers `model` unless this tenant already has its content (FindGraph by
  // hash first: a model is sent once). A model too large for one message goes
  // through RegisterGraphStream in kUploadChunkBytes chunks.
  absl::StatusOr<npu::v1::RegisterGraphResponse> RegisterModel(const ModelFile& model,
                                                               const std::string& device = "npu:0");
  // This tenant's registration of a model with this content hash (NOT_FOUND if none).
  absl::StatusOr<npu::v1::RegisterGraphResponse> FindGraph(const std::string& content_sha256);
  absl::Status UnregisterGraph(const std::string& graph_id);
  // A request larger than one message has its largest inline inputs uploaded
  // first (Upload streams them) and fed by handle; those handles are freed
  // after the run, whatever its outcome.
  absl::StatusOr<npu::v1::RunResponse> Run(const npu::v1::RunRequest& request);

 private:
  friend class Trainer;  // client/trainer.h: TrainingService calls, with this client's deadline and token
  Client(std::string target, ClientOptions options, std::shared_ptr<grpc::Channel> channel);

  // Headroom below the send limit for a message's fields besides the payload.
  static constexpr size_t kMessageOverheadBytes = size_t{64} << 10;
  absl::StatusOr<npu::v1::RunResponse> RunOnce(const npu::v1::RunRequest& request);
  size_t ChunkBytes() const;
  // Deadline and auth metadata, the same for every call.
  void PrepareContext(grpc::ClientContext& context) const;
  // The call's status as absl::Status, with a hint for TLS mismatches.
  absl::Status Failed(const grpc::Status& status) const;

  std::string target_;
  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<npu::v1::DeviceService::Stub> devices_;
  std::unique_ptr<npu::v1::MemoryService::Stub> memory_;
  std::unique_ptr<npu::v1::RuntimeService::Stub> runtime_;
  std::unique_ptr<npu::v1::TrainingService::Stub> training_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

}  // namespace npu::client
