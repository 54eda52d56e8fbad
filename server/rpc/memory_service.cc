#include "server/rpc/memory_service.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "server/rpc/call_tenant.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/parse_error_interceptor.h"
#include "server/core/request_log.h"

namespace npu::rpc {
namespace {

// The next chunk of an upload: true with one, false at the end of the stream.
// A chunk that did not parse also ends the stream for gRPC; when protobuf said
// why (a string field with invalid UTF-8) it is an error naming the field.
absl::StatusOr<bool> NextChunk(grpc::ServerReader<v1::UploadChunk>* reader, v1::UploadChunk* chunk, int64_t index) {
  TakeProtobufParseComplaint();  // what an earlier call on this thread left
  if (reader->Read(chunk)) return true;
  const std::string complaint = TakeProtobufParseComplaint();
  if (complaint.empty()) return false;
  return absl::InvalidArgumentError(
      absl::StrCat("upload chunk ", index, " is not a valid npu.v1.UploadChunk message: ", complaint));
}

}  // namespace

absl::Status MemoryServiceImpl::DoUpload(const std::string& tenant, grpc::ServerReader<v1::UploadChunk>* reader,
                                         v1::TensorHandle* resp) {
  v1::UploadChunk chunk;
  int64_t index = 1;
  auto more = NextChunk(reader, &chunk, index);
  if (!more.ok()) return more.status();
  if (!*more) {
    return absl::InvalidArgumentError(
        "upload stream ended before its header (or its first message is not a valid npu.v1.UploadChunk)");
  }
  if (!chunk.has_header()) return absl::InvalidArgumentError("the first upload chunk must carry the header");
  auto device = state_.devices.Find(chunk.header().device());
  if (!device.ok()) return device.status();
  auto type = graph::ValidateType(chunk.header().type().dtype(), chunk.header().type().shape(), "upload header");
  if (!type.ok()) return type.status();
  const uint64_t expected = type->bytes();
  if (expected > state_.limits.max_tensor_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("upload header: ", graph::ToString(*type), " is ", expected,
                                                   " bytes; the limit is ", state_.limits.max_tensor_bytes));
  }
  if (auto s = state_.tensors.Reserve(tenant, *device, expected); !s.ok()) return s;
  graph::HostTensor tensor = graph::HostTensor::Allocate(*type);
  uint64_t received = 0;
  absl::Status status;
  while (true) {
    if (index > 1 && chunk.has_header()) {
      status = absl::InvalidArgumentError("only the first upload chunk may carry a header");
      break;
    }
    const std::string& data = chunk.data();
    if (data.size() > expected - received) {
      status = absl::InvalidArgumentError(absl::StrCat("upload sent more than the ", expected, " bytes of ",
                                                       graph::ToString(*type)));
      break;
    }
    std::memcpy(tensor.mutable_data() + received, data.data(), data.size());
    received += data.size();
    more = NextChunk(reader, &chunk, ++index);
    if (!more.ok()) status = more.status();
    if (!more.ok() || !*more) break;
  }
  if (status.ok() && received != expected) {
    status = absl::InvalidArgumentError(absl::StrCat("upload of ", graph::ToString(*type), " sent ", received,
                                                     " of ", expected, " bytes; the stream ended after chunk ",
                                                     index - 1, " (a chunk that is not a valid message ends it too)"));
  }
  if (status.ok()) status = graph::CheckBoolBytes(*type, tensor.data(), "upload");
  if (!status.ok()) {
    state_.tensors.Release(tenant, *device, expected);
    return status;
  }
  *resp = state_.tensors.PutReserved(tenant, *device, std::move(tensor));
  state_.counters.uploads_total.fetch_add(1);
  return absl::OkStatus();
}

grpc::Status MemoryServiceImpl::Upload(grpc::ServerContext* ctx, grpc::ServerReader<v1::UploadChunk>* reader,
                                       v1::TensorHandle* resp) {
  core::RequestLog log("Upload");
  auto tenant = TenantOf(state_, *ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  if (auto s = state_.CheckAdmitting(); !s.ok()) return ToGrpcStatus(log.Finish(s));
  return ToGrpcStatus(log.Finish(DoUpload(*tenant, reader, resp)));
}

absl::Status MemoryServiceImpl::DoDownload(const std::string& tenant, const v1::DownloadRequest& req,
                                           grpc::ServerWriter<v1::DownloadChunk>* writer) {
  auto stored = state_.tensors.Get(tenant, req.handle());
  if (!stored.ok()) return stored.status();
  const uint64_t chunk_bytes =
      req.chunk_bytes() == 0 ? state_.limits.download_chunk_bytes
                             : std::clamp<uint64_t>(req.chunk_bytes(), 4096, state_.limits.max_message_bytes / 2);
  const uint64_t total = stored->tensor.bytes();
  const char* data = reinterpret_cast<const char*>(stored->tensor.data());
  uint64_t sent = 0;
  v1::DownloadChunk chunk;
  *chunk.mutable_info() = core::TensorStore::Describe(*stored);
  do {
    const uint64_t len = std::min(chunk_bytes, total - sent);
    chunk.set_data(data + sent, len);
    if (!writer->Write(chunk)) return absl::CancelledError("client went away during download");
    chunk.clear_info();
    sent += len;
  } while (sent < total);
  state_.counters.downloads_total.fetch_add(1);
  return absl::OkStatus();
}

grpc::Status MemoryServiceImpl::Download(grpc::ServerContext* ctx, const v1::DownloadRequest* req,
                                         grpc::ServerWriter<v1::DownloadChunk>* writer) {
  core::RequestLog log("Download");
  auto tenant = TenantOf(state_, *ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  return ToGrpcStatus(log.Finish(DoDownload(*tenant, *req, writer)));
}

void MemoryServiceImpl::AddMethods(UnaryMethods& methods) {
  methods.Add<v1::FreeRequest, v1::FreeResponse>(
      *this, &MemoryServiceImpl::RequestFree, {"Free", "/npu.v1.MemoryService/Free"},
      [this](auto& call) { call.Finish(state_.tensors.Free(call.tenant(), call.request().handle())); });
  methods.Add<v1::ListHandlesRequest, v1::ListHandlesResponse>(
      *this, &MemoryServiceImpl::RequestList, {"List", "/npu.v1.MemoryService/List"}, [this](auto& call) {
        for (auto& h : state_.tensors.List(call.tenant())) *call.response().add_handles() = std::move(h);
        call.Finish(absl::OkStatus());
      });
}

}  // namespace npu::rpc
