#include "client/client.h"

#include <algorithm>
#include <utility>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "client/status_mapping.h"
#include "client/transport_hint.h"

namespace npu::client {
namespace {

constexpr uint64_t kMaxDownloadReserveBytes = uint64_t{4} << 30;

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const std::string& target,
                                                        const ClientOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(target, options);
  if (!channel.ok()) return channel.status();
  return std::unique_ptr<Client>(new Client(target, options, *std::move(channel)));
}

Client::Client(std::string target, ClientOptions options, std::shared_ptr<grpc::Channel> channel)
    : target_(std::move(target)),
      options_(std::move(options)),
      channel_(std::move(channel)),
      devices_(npu::v1::DeviceService::NewStub(channel_)),
      memory_(npu::v1::MemoryService::NewStub(channel_)),
      runtime_(npu::v1::RuntimeService::NewStub(channel_)),
      training_(npu::v1::TrainingService::NewStub(channel_)),
      health_(grpc::health::v1::Health::NewStub(channel_)) {}

size_t Client::ChunkBytes() const {
  const int64_t room = options_.max_send_message_bytes - static_cast<int64_t>(kMessageOverheadBytes);
  return std::clamp<size_t>(room > 0 ? static_cast<size_t>(room) : 0, 4096, kUploadChunkBytes);
}

absl::Status Client::Failed(const grpc::Status& status) const {
  return WithTransportHint(FromGrpcStatus(status), options_);
}

void Client::PrepareContext(grpc::ClientContext& context) const {
  if (options_.timeout != absl::InfiniteDuration() && options_.timeout > absl::ZeroDuration()) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + options_.timeout));
  }
  if (!options_.bearer_token.empty()) {
    context.AddMetadata("authorization", absl::StrCat("Bearer ", options_.bearer_token));
  }
}

absl::StatusOr<npu::v1::ListDevicesResponse> Client::ListDevices() {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::ListDevicesResponse response;
  grpc::Status status = devices_->ListDevices(&context, {}, &response);
  if (!status.ok()) return Failed(status);
  return response;
}

absl::StatusOr<npu::v1::DeviceInfo> Client::GetDevice(const std::string& device) {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::GetDeviceRequest request;
  request.set_device(device);
  npu::v1::DeviceInfo response;
  grpc::Status status = devices_->GetDevice(&context, request, &response);
  if (!status.ok()) return Failed(status);
  return response;
}

absl::StatusOr<npu::v1::ServerStats> Client::GetStats() {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::ServerStats response;
  grpc::Status status = devices_->GetStats(&context, {}, &response);
  if (!status.ok()) return Failed(status);
  return response;
}

absl::StatusOr<ServingStatus> Client::Health(const std::string& service) {
  grpc::ClientContext context;
  PrepareContext(context);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = health_->Check(&context, request, &response);
  if (!status.ok()) return Failed(status);
  return response.status();
}

absl::StatusOr<npu::v1::TensorHandle> Client::Upload(const npu::v1::Tensor& tensor,
                                                     const std::string& device) {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::TensorHandle handle;
  std::unique_ptr<grpc::ClientWriter<npu::v1::UploadChunk>> writer =
      memory_->Upload(&context, &handle);

  const std::string& data = tensor.data();
  size_t offset = 0;
  bool first = true;
  // An empty tensor still sends one chunk, for its header.
  while (first || offset < data.size()) {
    npu::v1::UploadChunk chunk;
    if (first) {
      npu::v1::UploadHeader* header = chunk.mutable_header();
      header->set_device(device);
      header->mutable_type()->set_dtype(tensor.dtype());
      *header->mutable_type()->mutable_shape() = tensor.shape();
    }
    const size_t length = std::min(ChunkBytes(), data.size() - offset);
    chunk.set_data(data.data() + offset, length);
    offset += length;
    first = false;
    // A failed write means the server ended the call; Finish says why.
    if (!writer->Write(chunk)) break;
  }
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!status.ok()) return Failed(status);
  return handle;
}

absl::StatusOr<npu::v1::Tensor> Client::Download(const std::string& handle) {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::DownloadRequest request;
  request.set_handle(handle);
  std::unique_ptr<grpc::ClientReader<npu::v1::DownloadChunk>> reader =
      memory_->Download(&context, request);

  npu::v1::Tensor tensor;
  npu::v1::DownloadChunk chunk;
  bool have_header = false;
  uint64_t expected_bytes = 0;
  std::string* data = tensor.mutable_data();
  while (reader->Read(&chunk)) {
    if (!have_header) {
      if (!chunk.has_info()) {
        context.TryCancel();
        reader->Finish();
        return absl::DataLossError(
            absl::StrCat("download of \"", handle, "\": first chunk has no header"));
      }
      have_header = true;
      tensor.set_dtype(chunk.info().type().dtype());
      *tensor.mutable_shape() = chunk.info().type().shape();
      expected_bytes = chunk.info().bytes();
      // Reserve once, so large tensors are not copied as they grow. Capped, so
      // a lying header cannot make us allocate without bound.
      data->reserve(std::min(expected_bytes, kMaxDownloadReserveBytes));
    }
    data->append(chunk.data());
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return Failed(status);
  if (!have_header) {
    return absl::DataLossError(absl::StrCat("download of \"", handle, "\": no data received"));
  }
  if (data->size() != expected_bytes) {
    return absl::DataLossError(absl::StrCat("download of \"", handle, "\": received ",
                                            data->size(), " bytes, header says ", expected_bytes));
  }
  return tensor;
}

absl::Status Client::Free(const std::string& handle) {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::FreeRequest request;
  request.set_handle(handle);
  npu::v1::FreeResponse response;
  return Failed(memory_->Free(&context, request, &response));
}

absl::StatusOr<npu::v1::ListHandlesResponse> Client::ListHandles() {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::ListHandlesResponse response;
  grpc::Status status = memory_->List(&context, {}, &response);
  if (!status.ok()) return Failed(status);
  return response;
}

absl::StatusOr<npu::v1::RegisterGraphResponse> Client::RegisterGraph(
    const npu::v1::RegisterGraphRequest& request) {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::RegisterGraphResponse response;
  grpc::Status status = runtime_->RegisterGraph(&context, request, &response);
  if (!status.ok()) return Failed(status);
  return response;
}

absl::Status Client::UnregisterGraph(const std::string& graph_id) {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::UnregisterGraphRequest request;
  request.set_graph_id(graph_id);
  npu::v1::UnregisterGraphResponse response;
  return Failed(runtime_->UnregisterGraph(&context, request, &response));
}

absl::StatusOr<npu::v1::RegisterGraphResponse> Client::FindGraph(const std::string& content_sha256) {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::FindGraphRequest request;
  request.set_content_sha256(content_sha256);
  npu::v1::RegisterGraphResponse response;
  grpc::Status status = runtime_->FindGraph(&context, request, &response);
  if (!status.ok()) return Failed(status);
  return response;
}

absl::StatusOr<npu::v1::RegisterGraphResponse> Client::RegisterModel(const ModelFile& model,
                                                                     const std::string& device) {
  absl::StatusOr<npu::v1::RegisterGraphResponse> found = FindGraph(model.sha256);
  if (found.ok() || found.status().code() != absl::StatusCode::kNotFound) return found;
  if (model.bytes.size() + kMessageOverheadBytes <= static_cast<size_t>(options_.max_send_message_bytes)) {
    npu::v1::RegisterGraphRequest request;
    if (model.format == npu::v1::RegisterGraphHeader::ONNX) {
      request.set_onnx_model(model.bytes);
    } else if (!request.mutable_graph()->ParseFromString(model.bytes)) {
      return absl::InvalidArgumentError("the model's bytes are not a serialized npu.v1.Graph");
    }
    request.set_device(device);
    request.set_content_sha256(model.sha256);
    return RegisterGraph(request);
  }
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::RegisterGraphResponse response;
  std::unique_ptr<grpc::ClientWriter<npu::v1::RegisterGraphChunk>> writer =
      runtime_->RegisterGraphStream(&context, &response);
  for (size_t offset = 0; offset == 0 || offset < model.bytes.size();) {
    npu::v1::RegisterGraphChunk chunk;
    if (offset == 0) {
      npu::v1::RegisterGraphHeader* header = chunk.mutable_header();
      header->set_format(model.format);
      header->set_device(device);
      header->set_total_bytes(model.bytes.size());
      header->set_content_sha256(model.sha256);
    }
    const size_t length = std::min(ChunkBytes(), model.bytes.size() - offset);
    chunk.set_data(model.bytes.data() + offset, length);
    offset += length;
    if (!writer->Write(chunk) || length == 0) break;  // a failed write: Finish says why
  }
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!status.ok()) return Failed(status);
  return response;
}

absl::StatusOr<npu::v1::RunResponse> Client::Run(const npu::v1::RunRequest& request) {
  const size_t limit = static_cast<size_t>(options_.max_send_message_bytes);
  if (request.ByteSizeLong() <= limit) return RunOnce(request);
  // Too large for one message: the largest inline inputs go ahead by Upload.
  npu::v1::RunRequest smaller = request;
  std::vector<int> order;
  for (int i = 0; i < smaller.inputs_size(); ++i) {
    if (smaller.inputs(i).has_tensor()) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return smaller.inputs(a).tensor().data().size() > smaller.inputs(b).tensor().data().size();
  });
  const std::string device = request.options().device().empty() ? "npu:0" : request.options().device();
  std::vector<std::string> uploaded;
  absl::Status status;
  for (int i : order) {
    if (smaller.ByteSizeLong() + kMessageOverheadBytes <= limit) break;
    absl::StatusOr<npu::v1::TensorHandle> handle = Upload(smaller.inputs(i).tensor(), device);
    if (!handle.ok()) {
      status = handle.status();
      break;
    }
    uploaded.push_back(handle->handle());
    smaller.mutable_inputs(i)->set_handle(handle->handle());
  }
  absl::StatusOr<npu::v1::RunResponse> response = status.ok() ? RunOnce(smaller) : status;
  for (const std::string& h : uploaded) Free(h).IgnoreError();  // best effort: the run's result stands
  return response;
}

absl::StatusOr<npu::v1::RunResponse> Client::RunOnce(const npu::v1::RunRequest& request) {
  grpc::ClientContext context;
  PrepareContext(context);
  npu::v1::RunResponse response;
  grpc::Status status = runtime_->Run(&context, request, &response);
  if (!status.ok()) return Failed(status);
  return response;
}

}  // namespace npu::client
