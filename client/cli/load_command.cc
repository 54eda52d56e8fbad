#include "client/cli/load_command.h"

#include <cstring>
#include <map>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cli/cli_status.h"
#include "client/cli/command_inputs.h"
#include "client/model_file.h"
#include "client/cli/load_report.h"
#include "client/cli/load_step_runner.h"
#include "client/host_tensor.h"
#include "client/npy.h"

namespace npu::client::cli {
namespace {

absl::StatusOr<npu::v1::Tensor> RandomTensor(const npu::v1::ValueInfo& info, std::mt19937_64& rng) {
  std::vector<int64_t> shape(info.shape().begin(), info.shape().end());
  for (int64_t d : shape) {
    if (d == -1) {
      return UsageError(absl::InvalidArgumentError(absl::StrCat(
          "graph input \"", info.name(), "\" has a dynamic dim: give its value with --input ", info.name(), "=FILE.npy")));
    }
  }
  absl::StatusOr<int64_t> count = ElementCount(shape);
  if (!count.ok()) return count.status();
  if (info.dtype() == npu::v1::FLOAT16 || info.dtype() == npu::v1::FLOAT32) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> values(*count);
    for (float& v : values) v = dist(rng);
    return MakeFloatTensor(info.dtype(), shape, values);
  }
  const size_t size = DataTypeSize(info.dtype());
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph input \"", info.name(), "\" has dtype ", info.dtype(), ", which cannot be generated"));
  }
  npu::v1::Tensor t;
  t.set_dtype(info.dtype());
  *t.mutable_shape() = info.shape();
  std::string* data = t.mutable_data();
  data->resize(*count * size);
  std::uniform_int_distribution<int> dist(0, info.dtype() == npu::v1::BOOL ? 1 : 9);  // small: valid indices too
  for (int64_t i = 0; i < *count; ++i) {
    const int64_t v = dist(rng);
    std::memcpy(data->data() + i * size, &v, size);  // little-endian: the low bytes
  }
  return t;
}

}  // namespace

bool SendsGraphInline(const Client& client, const LoadCommandArgs& args) {
  // A registered graph lives on one replica only: behind a target that names
  // several servers, round_robin would send most runs where the id is unknown.
  const std::string& t = client.target();
  return args.inline_graph || t.find(',') != std::string::npos || absl::StartsWith(t, "dns:");
}

absl::StatusOr<npu::v1::RunRequest> PrepareLoadRequest(Client& client, const LoadCommandArgs& args) {
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> specs = ParseInputSpecs(args.inputs);
  if (!specs.ok()) return specs.status();
  std::map<std::string, npu::v1::Tensor> given;
  for (const auto& [name, file] : *specs) {
    absl::StatusOr<npu::v1::Tensor> t = ReadNpy(file);
    if (!t.ok()) return UsageError(t.status());
    given.emplace(name, *std::move(t));
  }

  npu::v1::RunRequest request;
  request.mutable_options()->set_device(args.device);
  request.mutable_options()->set_profile(args.server_profile);
  if (args.model.empty() == args.graph_path.empty()) {
    return UsageError(absl::InvalidArgumentError("npu load takes a graph file or --model NAME (one of them)"));
  }
  if (!args.model.empty()) {
    // The server knows the model's inputs; every one comes from a file.
    request.set_model(args.model);
    request.set_model_version(args.model_version);
    for (auto& [name, tensor] : given) {
      npu::v1::RunInput* in = request.add_inputs();
      in->set_name(name);
      *in->mutable_tensor() = std::move(tensor);
    }
    if (request.inputs().empty()) {
      return UsageError(absl::InvalidArgumentError("with --model, give every input of the model with --input NAME=FILE.npy"));
    }
    return request;
  }
  google::protobuf::RepeatedPtrField<npu::v1::ValueInfo> graph_inputs;
  if (SendsGraphInline(client, args)) {
    absl::StatusOr<npu::v1::Graph> graph = LoadGraphFile(args.graph_path);
    if (!graph.ok()) return graph.status();
    graph_inputs = graph->inputs();
    *request.mutable_graph() = *std::move(graph);
  } else {
    absl::StatusOr<ModelFile> model = ReadModelFile(args.graph_path);
    if (!model.ok()) return UsageError(model.status());
    absl::StatusOr<npu::v1::RegisterGraphResponse> registered = client.RegisterModel(*model, args.device);
    if (!registered.ok()) return registered.status();
    graph_inputs = registered->inputs();
    request.set_graph_id(registered->graph_id());
  }
  std::mt19937_64 rng(args.seed);
  for (const npu::v1::ValueInfo& info : graph_inputs) {
    npu::v1::RunInput* in = request.add_inputs();
    in->set_name(info.name());
    auto it = given.find(info.name());
    if (it != given.end()) {
      *in->mutable_tensor() = std::move(it->second);
      given.erase(it);
      continue;
    }
    absl::StatusOr<npu::v1::Tensor> t = RandomTensor(info, rng);
    if (!t.ok()) return t.status();
    *in->mutable_tensor() = *std::move(t);
  }
  if (!given.empty()) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat("--input \"", given.begin()->first, "\" is not an input of the graph")));
  }
  return request;
}

absl::StatusOr<std::vector<LoadStep>> RunLoad(Client& client, const npu::v1::RunRequest& request,
                                              const LoadCommandArgs& args, std::ostream& progress_out,
                                              const std::function<void(const LoadStep&)>& on_step) {
  if (args.requests < 1 || args.duration_s <= 0 || args.warmup < 0 || args.rate < 0) {
    return UsageError(absl::InvalidArgumentError(
        "--requests must be >= 1, --duration > 0, --warmup >= 0 and --rate >= 0: a load is always bounded"));
  }
  if (args.stability_percentage < 0 || args.stability_percentage >= 100) {
    return UsageError(absl::InvalidArgumentError("--stability-percentage must be from 0 (off) to below 100"));
  }
  if (args.stability_percentage > 0 && (args.max_windows < kStableWindows || args.max_windows > 1000)) {
    return UsageError(absl::InvalidArgumentError(absl::StrCat(
        "--max-windows must be from ", kStableWindows, " (the windows that must agree) to 1000")));
  }
  std::vector<LoadStep> steps;
  for (int c : args.concurrency) {
    steps.push_back(RunLoadStep(client, request, args, c, progress_out));
    if (on_step) on_step(steps.back());
  }
  return steps;
}

absl::Status RunLoadCommand(Client& client, const LoadCommandArgs& args, std::ostream& out, std::ostream& notes) {
  if (absl::Status s = LoadReportWriter::CheckFormat(args.format); !s.ok()) return s;
  absl::StatusOr<npu::v1::RunRequest> request = PrepareLoadRequest(client, args);
  if (!request.ok()) return request.status();
  LoadReportWriter writer(args.format, out, notes);
  absl::StatusOr<std::vector<LoadStep>> steps =
      RunLoad(client, *request, args, notes, [&writer](const LoadStep& step) { writer.Write(step); });
  if (!request->graph_id().empty()) {
    client.UnregisterGraph(request->graph_id()).IgnoreError();  // best effort: the server forgets it anyway on exit
  }
  return steps.status();
}

}  // namespace npu::client::cli
