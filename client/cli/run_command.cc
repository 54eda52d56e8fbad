#include "client/cli/run_command.h"

#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/ascend_profiler_files.h"
#include "client/cli/chrome_trace.h"
#include "client/cli/command_inputs.h"
#include "client/cli/float_mode_arg.h"
#include "client/cli/cli_status.h"
#include "client/cli/op_summary.h"
#include "client/cli/overflow_warning.h"
#include "client/cli/profile_table.h"
#include "client/device_name.h"
#include "client/host_tensor.h"
#include "client/model_file.h"
#include "client/npy.h"

namespace npu::client::cli {
namespace {

namespace fs = std::filesystem;

absl::Status Usage(absl::string_view message) {
  return UsageError(absl::InvalidArgumentError(message));
}

std::string TensorSummary(npu::v1::DataType dtype,
                          const google::protobuf::RepeatedField<int64_t>& shape) {
  return absl::StrCat(DataTypeName(dtype), " ",
                      ShapeString(absl::MakeConstSpan(shape.data(), shape.size())));
}

absl::Status EnsureDirectory(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir)) {
    return absl::PermissionDeniedError(absl::StrCat("cannot create output directory \"", dir,
                                                    "\"", error ? ": " + error.message() : ""));
  }
  return absl::OkStatus();
}

// Picks a file name per value, unique within one directory, and writes it.
class NpyDirectoryWriter {
 public:
  NpyDirectoryWriter(std::string dir, std::ostream& notices)
      : dir_(std::move(dir)), notices_(notices) {}

  // The path written.
  absl::StatusOr<std::string> Write(const std::string& value_name, const npu::v1::Tensor& tensor) {
    std::string stem = SafeFileName(value_name);
    for (int n = 2; used_.count(stem) > 0; ++n) stem = absl::StrCat(SafeFileName(value_name), "_", n);
    used_.insert(stem);
    const std::string file = stem + ".npy";
    if (stem != value_name) {
      notices_ << "note: \"" << value_name << "\" written as " << file
               << " (characters unsafe in file names replaced)\n";
    }
    const std::string path = (fs::path(dir_) / file).string();
    if (absl::Status status = WriteNpy(path, tensor); !status.ok()) return status;
    return path;
  }

 private:
  std::string dir_;
  std::ostream& notices_;
  std::set<std::string> used_;
};

}  // namespace

std::string SafeFileName(const std::string& value_name) {
  std::string name = value_name;
  for (char& c : name) {
    const bool safe = absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                      c == '.';
    if (!safe) c = '_';
  }
  if (name.empty()) return "_";
  if (name[0] == '.') name[0] = '_';  // no hidden files, no "." or ".."
  return name;
}

absl::StatusOr<ModelFile> ReadModelArg(const RunCommandArgs& args) {
  absl::StatusOr<ModelFile> model = ReadModelFile(args.graph_path);
  if (!model.ok()) return UsageError(model.status());
  return model;
}

absl::StatusOr<npu::v1::RunRequest> PrepareRunRequest(const RunCommandArgs& args,
                                                      const npu::v1::RegisterGraphResponse& model,
                                                      std::ostream& notices) {
  absl::StatusOr<std::string> device = NormalizeDevice(args.device);
  if (!device.ok()) return UsageError(device.status());
  if (IsCudaDeviceName(args.device)) {
    notices << "note: " << args.device << " mapped to " << *device
            << " (npuserve simulates Ascend NPUs)\n";
  }

  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> specs =
      ParseInputSpecs(args.inputs);
  if (!specs.ok()) return specs.status();

  std::map<std::string, const npu::v1::ValueInfo*> graph_inputs;
  std::vector<std::string> input_names;
  for (const npu::v1::ValueInfo& input : model.inputs()) {
    graph_inputs[input.name()] = &input;
    input_names.push_back(input.name());
  }
  const std::string known =
      input_names.empty() ? "it has none" : absl::StrCat("its inputs: ", absl::StrJoin(input_names, ", "));
  std::set<std::string> given;
  for (const auto& [name, file] : *specs) {
    if (graph_inputs.count(name) == 0) {
      return Usage(absl::StrCat("--input \"", name, "\": ", args.graph_path,
                                " has no input of that name (", known, ")"));
    }
    given.insert(name);
  }
  for (const std::string& name : input_names) {
    if (given.count(name) == 0) {
      return Usage(absl::StrCat("graph input \"", name, "\" has no value; add --input ", name,
                                "=FILE.npy (or =handle:ID)"));
    }
  }
  std::set<std::string> outputs;
  for (const npu::v1::ValueInfo& output : model.outputs()) outputs.insert(output.name());
  for (const std::string& name : args.keep) {
    if (outputs.count(name) == 0) {
      return Usage(absl::StrCat("--keep \"", name, "\": ", args.graph_path, " has no output of that name"));
    }
  }

  npu::v1::RunRequest request;
  request.set_graph_id(model.graph_id());
  for (const auto& [name, file] : *specs) {
    npu::v1::RunInput* input = request.add_inputs();
    input->set_name(name);
    if (absl::StartsWith(file, kHandlePrefix)) {  // already on the device (npu upload, --keep)
      input->set_handle(file.substr(kHandlePrefix.size()));
      continue;
    }
    absl::StatusOr<npu::v1::Tensor> tensor = ReadNpy(file);
    if (!tensor.ok()) return UsageError(tensor.status());
    const npu::v1::DataType expected = graph_inputs[name]->dtype();
    if (expected != npu::v1::DATA_TYPE_UNSPECIFIED && expected != tensor->dtype()) {
      return Usage(absl::StrCat("--input \"", name, "\": graph expects ", DataTypeName(expected),
                                ", ", file, " holds ", DataTypeName(tensor->dtype()),
                                " (convert with a.astype(np.", DataTypeName(expected), "))"));
    }
    *input->mutable_tensor() = *std::move(tensor);
  }
  absl::StatusOr<npu::v1::FloatMode> float_mode = ParseFloatModeArg(args.float_mode);
  if (!float_mode.ok()) return float_mode.status();
  npu::v1::RunOptions* options = request.mutable_options();
  options->set_device(*device);
  options->set_float_mode(*float_mode);
  // Always: the profile carries each node's overflow count, which the run warns about.
  options->set_profile(true);
  // The overflow check runs unfused, so that each node's count is its own.
  options->set_debug(args.debug || args.overflow_check);
  for (const std::string& name : args.keep) options->add_keep_on_device(name);
  return request;
}

absl::Status WriteRunResults(const npu::v1::RunResponse& response, const RunCommandArgs& args,
                             std::ostream& out, std::ostream& notices) {
  if (absl::Status status = EnsureDirectory(args.output_dir); !status.ok()) return status;
  NpyDirectoryWriter writer(args.output_dir, notices);
  for (const npu::v1::RunOutput& output : response.outputs()) {
    if (output.has_tensor()) {
      absl::StatusOr<std::string> path = writer.Write(output.name(), output.tensor());
      if (!path.ok()) return path.status();
      out << output.name() << ": "
          << TensorSummary(output.tensor().dtype(), output.tensor().shape()) << " -> " << *path
          << "\n";
    } else if (output.has_handle()) {
      const npu::v1::TensorHandle& handle = output.handle();
      out << output.name() << ": " << TensorSummary(handle.type().dtype(), handle.type().shape())
          << " kept on " << handle.device() << " as handle " << handle.handle() << "\n";
    } else {
      notices << "note: output \"" << output.name() << "\" came back empty\n";
    }
  }

  if (args.debug) {
    const std::string dir = (fs::path(args.output_dir) / "intermediates").string();
    if (absl::Status status = EnsureDirectory(dir); !status.ok()) return status;
    NpyDirectoryWriter intermediates(dir, notices);
    int written = 0;
    for (const npu::v1::RunOutput& value : response.intermediates()) {
      if (!value.has_tensor()) continue;
      absl::StatusOr<std::string> path = intermediates.Write(value.name(), value.tensor());
      if (!path.ok()) return path.status();
      ++written;
    }
    out << "debug: " << written << " intermediate values -> " << dir << "\n";
  }

  if (response.has_profile()) {
    if (args.overflow_check) {
      ListOverflowingNodes(response.profile(), args.overflow_nums, out);
    } else {
      WarnAboutOverflow(response.profile(), notices);
    }
  }
  if (!args.profile_dir.empty() && response.has_profile()) {
    auto folders = WriteAscendProfilerFiles(args.profile_dir, {ProfiledStep{1, {response.profile()}}}, false);
    if (!folders.ok()) return UsageError(folders.status());
    out << "profiler files (kernel_details.csv, op_statistic.csv, op_summary.csv, trace_view.json) -> "
        << folders->front() << "/ASCEND_PROFILER_OUTPUT\n";
  }
  const bool wants_files = !args.op_summary_path.empty() || !args.trace_path.empty();
  if (args.profile || wants_files) {
    if (!response.has_profile()) {
      notices << "note: the server returned no profile\n";
      return absl::OkStatus();
    }
    if (args.profile) PrintProfile(response.profile(), out);
    if (!args.op_summary_path.empty()) {
      if (absl::Status s = WriteOpSummaryCsvFile(response.profile(), args.op_summary_path); !s.ok()) return s;
      out << "op summary -> " << args.op_summary_path << "\n";
    }
    if (!args.trace_path.empty()) {
      if (absl::Status s = WriteChromeTraceFile(response.profile(), args.trace_path); !s.ok()) return s;
      out << "trace -> " << args.trace_path << " (open in https://ui.perfetto.dev)\n";
    }
  }
  return absl::OkStatus();
}

absl::Status RunRunCommand(Client& client, const RunCommandArgs& args, std::ostream& out,
                           std::ostream& notices) {
  if (args.output_dir.empty()) return Usage("--output-dir is required");
  absl::StatusOr<ModelFile> model = ReadModelArg(args);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::string> device = NormalizeDevice(args.device);
  if (!device.ok()) return UsageError(device.status());
  // Registered once per content: a second `npu run` of the same file sends
  // only its hash; a model above the message limit is streamed.
  absl::StatusOr<npu::v1::RegisterGraphResponse> registered = client.RegisterModel(*model, *device);
  if (!registered.ok()) return registered.status();
  absl::StatusOr<npu::v1::RunRequest> request = PrepareRunRequest(args, *registered, notices);
  if (!request.ok()) return request.status();
  // Before the run, so a long run's results are not lost to a bad directory.
  if (absl::Status status = EnsureDirectory(args.output_dir); !status.ok()) {
    return UsageError(status);
  }
  absl::StatusOr<npu::v1::RunResponse> response = client.Run(*request);
  if (!response.ok()) return response.status();
  return WriteRunResults(*response, args, out, notices);
}

}  // namespace npu::client::cli
