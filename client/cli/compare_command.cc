#include "client/cli/compare_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/cli_status.h"
#include "client/cli/json_values.h"
#include "client/cli/compare_metrics.h"
#include "client/cli/csv_line.h"
#include "client/cli/float_mode_arg.h"
#include "client/cli/text_table.h"
#include "client/device_name.h"
#include "client/host_tensor.h"

namespace npu::client::cli {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Struct;
using google::protobuf::Value;

// msprobe's real-data columns, in its order; the names as the users
// read them in msprobe's compare_result files.
constexpr const char* kHeader[] = {"NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
                                   "Bench Tensor Shape", "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                                   "One Thousandth Err Ratio", "Five Thousandth Err Ratio", "Result",
                                   "Err_message"};

struct Row {
  int node = 0;  // index into the profile's nodes
  std::string value;
  ComparedTensor npu, bench;
  TensorComparison comparison;
};

std::string ShapeText(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

absl::StatusOr<ComparedTensor> Widen(const v1::Tensor& t) {
  auto values = TensorToFloats(t);
  if (!values.ok()) return values.status();
  ComparedTensor c;
  c.dtype = std::string(DataTypeName(t.dtype()));
  c.shape.assign(t.shape().begin(), t.shape().end());
  c.values.assign(values->begin(), values->end());
  return c;
}

// Every value a debug run returned, by name.
std::map<std::string, const v1::Tensor*> ValuesOf(const v1::RunResponse& r) {
  std::map<std::string, const v1::Tensor*> values;
  for (const v1::RunOutput& o : r.intermediates()) {
    if (o.has_tensor()) values[o.name()] = &o.tensor();
  }
  for (const v1::RunOutput& o : r.outputs()) {
    if (o.has_tensor()) values[o.name()] = &o.tensor();
  }
  return values;
}

Value Metric(const TensorComparison::Metric& m) { return m.value ? JsonNumber(*m.value) : JsonText(m.missing); }
Value Strings(const std::vector<std::string>& items) {
  Value x;
  for (const std::string& s : items) *x.mutable_list_value()->add_values() = JsonText(s);
  return x;
}

std::vector<std::string> Names(const google::protobuf::RepeatedPtrField<v1::TensorDesc>& descs) {
  std::vector<std::string> names;
  for (const v1::TensorDesc& d : descs) names.push_back(d.name());
  return names;
}

// scripts/plot_compare.py: as given, beside the binary (an install's share
// dir), or in the source tree the binary was built from.
std::string FindPlotScript(const std::string& given) {
  if (!given.empty()) return given;
  std::vector<fs::path> candidates;
  if (const char* dir = std::getenv("NPU_SCRIPTS_DIR")) candidates.push_back(fs::path(dir) / "plot_compare.py");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share" / "npuserve" / "plot_compare.py");
  candidates.push_back(NPU_PLOT_COMPARE_SOURCE_SCRIPT);
  for (const fs::path& p : candidates) {
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

// Runs Debian's python3 (or $NPU_PYTHON) on SCRIPT ARGS... without a shell; its exit status.
int RunPython(const std::string& script, const std::vector<std::string>& args) {
  const char* python = std::getenv("NPU_PYTHON");
  std::vector<std::string> argv_s = {python != nullptr && *python != '\0' ? python : NPU_MIGRATE_PYTHON, script};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

absl::Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

}  // namespace

std::string ModuleScope(const std::string& node_name) {
  if (!absl::StartsWith(node_name, "/")) return "";
  std::vector<std::string> parts = absl::StrSplit(node_name.substr(1), '/');
  if (parts.size() < 2) return "";
  parts.pop_back();  // the op's own name
  // torch.onnx.export names each level by its own attribute ("layer1.0", then
  // "conv1") or by its whole path ("layer1.0.conv1"); either way the path ends here.
  std::string path;
  for (const std::string& p : parts) {
    path = path.empty() || absl::StartsWith(p, path + ".") ? p : absl::StrCat(path, ".", p);
  }
  return path;
}

absl::Status RunCompareCommand(Client& client, const CompareCommandArgs& args, std::ostream& out,
                               std::ostream& notices) {
  if (args.bench != "fp32") {
    return UsageError(absl::InvalidArgumentError(absl::StrCat(
        "--bench ", args.bench, " is not offered: the bench is fp32 (the graph as a GPU computes it: the Cube's "
        "operands unrounded, fp32 multiply-adds, IEEE fp16)")));
  }
  const RunCommandArgs& run = args.run;
  if (run.output_dir.empty()) return UsageError(absl::InvalidArgumentError("--output-dir is required"));
  absl::StatusOr<ModelFile> model = ReadModelArg(run);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::string> device = NormalizeDevice(run.device);
  if (!device.ok()) return UsageError(device.status());
  absl::StatusOr<v1::RegisterGraphResponse> registered = client.RegisterModel(*model, *device);
  if (!registered.ok()) return registered.status();
  RunCommandArgs debug_run = run;
  debug_run.debug = true;  // unfused, every intermediate back
  absl::StatusOr<v1::RunRequest> npu_request = PrepareRunRequest(debug_run, *registered, notices);
  if (!npu_request.ok()) return npu_request.status();
  std::error_code ec;
  fs::create_directories(run.output_dir, ec);
  if (!fs::is_directory(run.output_dir)) {
    return UsageError(absl::PermissionDeniedError(absl::StrCat("cannot create output directory \"", run.output_dir,
                                                               "\"", ec ? ": " + ec.message() : "")));
  }
  v1::RunRequest bench_request = *npu_request;
  bench_request.mutable_options()->set_numerics(v1::NUMERICS_BENCH_FP32);
  absl::StatusOr<v1::RunResponse> npu_run = client.Run(*npu_request);
  if (!npu_run.ok()) return npu_run.status();
  absl::StatusOr<v1::RunResponse> bench_run = client.Run(bench_request);
  if (!bench_run.ok()) return bench_run.status();
  if (!npu_run->has_profile()) return absl::InternalError("the server returned no profile for the NPU run");

  const auto npu_values = ValuesOf(*npu_run), bench_values = ValuesOf(*bench_run);
  const v1::Profile& profile = npu_run->profile();
  std::vector<Row> rows;
  std::map<std::string, size_t> row_of;  // value name -> its row
  for (int i = 0; i < profile.nodes_size(); ++i) {
    const v1::NodeProfile& node = profile.nodes(i);
    std::vector<const TensorComparison*> inputs;
    for (const v1::TensorDesc& in : node.inputs()) {
      if (auto it = row_of.find(in.name()); it != row_of.end()) inputs.push_back(&rows[it->second].comparison);
    }
    for (const v1::TensorDesc& o : node.outputs()) {
      auto n = npu_values.find(o.name());
      auto b = bench_values.find(o.name());
      if (n == npu_values.end() || b == bench_values.end()) continue;  // not returned (kept on the device)
      Row row;
      row.node = i;
      row.value = o.name();
      auto nt = Widen(*n->second);
      auto bt = Widen(*b->second);
      if (!nt.ok()) return nt.status();
      if (!bt.ok()) return bt.status();
      row.npu = *std::move(nt);
      row.bench = *std::move(bt);
      row.comparison = CompareTensors(row.npu, row.bench);
      ApplyInputRules(inputs, row.comparison);
      row_of[o.name()] = rows.size();
      rows.push_back(std::move(row));
    }
  }

  // A node's verdict is its worst output's.
  std::map<int, Verdict> node_verdict;
  for (const Row& r : rows) node_verdict[r.node] = std::max(node_verdict[r.node], r.comparison.result);
  int first = -1;
  for (const auto& [i, verdict] : node_verdict) {
    if (verdict != Verdict::kError) continue;
    bool inputs_hold = true;
    for (const v1::TensorDesc& in : profile.nodes(i).inputs()) {
      if (auto it = row_of.find(in.name()); it != row_of.end() && rows[it->second].comparison.result == Verdict::kError) {
        inputs_hold = false;
      }
    }
    if (inputs_hold) {
      first = i;
      break;
    }
  }

  // compare_result.csv
  std::string csv = absl::StrCat(absl::StrJoin(kHeader, ","), "\n");
  int counts[3] = {0, 0, 0};
  for (const Row& r : rows) {
    const v1::NodeProfile& node = profile.nodes(r.node);
    int index = 0;
    for (const v1::TensorDesc& o : node.outputs()) {
      if (o.name() == r.value) break;
      ++index;
    }
    const std::string name = absl::StrCat(node.name(), ".output.", index);
    const TensorComparison& c = r.comparison;
    ++counts[static_cast<int>(c.result)];
    const std::vector<std::string> cells = {
        name, name, r.npu.dtype, r.bench.dtype, ShapeText(r.npu.shape), ShapeText(r.bench.shape),
        c.cosine.Text(), c.euc_dist.Text(), c.max_abs_err.Text(), c.max_relative_err.Text(),
        c.one_thousandth.Text(), c.five_thousandth.Text(), VerdictName(c.result), c.err_message};
    csv += CsvLine(cells);
  }
  const fs::path dir(run.output_dir);
  if (auto s = WriteText(dir / "compare_result.csv", csv); !s.ok()) return s;

  // diff_analyze.json
  Struct analysis;
  auto& fields = *analysis.mutable_fields();
  fields["bench"] = JsonText(args.bench);
  fields["float_mode"] = JsonText(FloatModeWord(profile.float_mode()));
  fields["device"] = JsonText(profile.device());
  fields["preset"] = JsonText(profile.preset());
  fields["nodes_compared"] = JsonNumber(static_cast<double>(node_verdict.size()));
  fields["pass"] = JsonNumber(counts[0]);
  fields["warning"] = JsonNumber(counts[1]);
  fields["error"] = JsonNumber(counts[2]);
  if (first < 0) {
    fields["first_diverging_node"].set_null_value(google::protobuf::NULL_VALUE);
  } else {
    const v1::NodeProfile& node = profile.nodes(first);
    Struct d;
    auto& f = *d.mutable_fields();
    f["name"] = JsonText(node.name());
    f["op_type"] = JsonText(node.op_type());
    f["index"] = JsonNumber(first);
    f["inputs"] = Strings(Names(node.inputs()));
    f["outputs"] = Strings(Names(node.outputs()));
    f["module_scope"] = JsonText(ModuleScope(node.name()));
    for (const Row& r : rows) {
      if (r.node != first || r.comparison.result != Verdict::kError) continue;
      f["value"] = JsonText(r.value);
      f["Cosine"] = Metric(r.comparison.cosine);
      f["MaxAbsErr"] = Metric(r.comparison.max_abs_err);
      f["MaxRelativeErr"] = Metric(r.comparison.max_relative_err);
      f["Err_message"] = JsonText(r.comparison.err_message);
      break;
    }
    *fields["first_diverging_node"].mutable_struct_value() = d;
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  if (auto s = google::protobuf::util::MessageToJsonString(analysis, &json, options); !s.ok()) {
    return absl::InternalError(absl::StrCat("diff_analyze.json: ", s.message().as_string()));
  }
  if (auto s = WriteText(dir / "diff_analyze.json", json); !s.ok()) return s;

  // The summary.
  out << absl::StrFormat("compare (%s, %s mode) against the fp32 bench: %d outputs of %d nodes: %d pass, %d warning, "
                         "%d error\n",
                         profile.preset().empty() ? profile.device() : profile.preset(),
                         FloatModeWord(profile.float_mode()), rows.size(),
                         node_verdict.size(), counts[0], counts[1], counts[2]);
  if (first >= 0) {
    const v1::NodeProfile& node = profile.nodes(first);
    const std::string scope = ModuleScope(node.name());
    out << absl::StrFormat("first diverging node: \"%s\" (%s)%s\n", node.name(), node.op_type(),
                           scope.empty() ? "" : absl::StrCat(", module ", scope));
  } else {
    out << "no node diverged\n";
  }
  TextTable table({"node", "op", "Cosine", "MaxAbsErr", "MaxRelativeErr", "1/1000 ratio", "Result"});
  int listed = 0;
  for (const Row& r : rows) {
    if (r.comparison.result == Verdict::kPass || ++listed > 10) continue;
    const v1::NodeProfile& node = profile.nodes(r.node);
    table.AddRow({node.name(), node.op_type(), r.comparison.cosine.Text(), r.comparison.max_abs_err.Text(),
                  r.comparison.max_relative_err.Text(), r.comparison.one_thousandth.Text(),
                  VerdictName(r.comparison.result)});
  }
  if (listed > 0) table.Print(out);
  if (listed > 10) out << "(" << listed - 10 << " more rows that do not pass in compare_result.csv)\n";
  out << "compare_result.csv, diff_analyze.json -> " << run.output_dir << "\n";

  // compare.png, drawn by Python's matplotlib when it is there.
  const std::string script = FindPlotScript(args.plot_script);
  const fs::path png = dir / "compare.png";
  if (script.empty()) {
    notices << "note: compare.png not drawn: scripts/plot_compare.py not found (set NPU_SCRIPTS_DIR)\n";
  } else if (RunPython(script, {(dir / "compare_result.csv").string(), (dir / "diff_analyze.json").string(),
                                png.string()}) != 0) {
    notices << "note: compare.png not drawn: " << script << " failed (it needs python3-matplotlib)\n";
  } else {
    out << "compare.png -> " << png.string() << "\n";
  }
  return absl::OkStatus();
}

}  // namespace npu::client::cli
