// `npu`: the command line client. Parses argv with CLI11 and hands each
// command to its function in cli/, which tests drive directly.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "client/cli/cli_status.h"
#include "client/cli/compare_command.h"
#include "client/cli/devices_command.h"
#include "client/cli/health_command.h"
#include "client/cli/load_command.h"
#include "client/cli/memory_commands.h"
#include "client/cli/migrate_command.h"
#include "client/cli/run_command.h"
#include "client/cli/stats_command.h"
#include "client/cli/train_command.h"
#include "client/client.h"
#include "version/version.h"

namespace {

using npu::client::Client;
using npu::client::ClientOptions;
namespace cli = npu::client::cli;

struct GlobalArgs {
  std::string target = "127.0.0.1:50051";
  double timeout_s = 60;
  std::string token_file;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  bool tls = false;
};

absl::StatusOr<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return cli::UsageError(absl::NotFoundError(absl::StrCat("cannot read token file \"", path, "\"")));
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(contents.str()));
  if (token.empty()) {
    return cli::UsageError(absl::InvalidArgumentError(absl::StrCat("token file \"", path, "\" is empty")));
  }
  return token;
}

absl::StatusOr<std::unique_ptr<Client>> ConnectFromArgs(const GlobalArgs& args) {
  ClientOptions options;
  options.timeout = args.timeout_s > 0 ? absl::Seconds(args.timeout_s) : absl::InfiniteDuration();
  options.use_tls = args.tls || !args.tls_ca.empty() || !args.tls_cert.empty();
  options.root_cert_path = args.tls_ca;
  options.client_cert_path = args.tls_cert;
  options.client_key_path = args.tls_key;
  if (!args.token_file.empty()) {
    absl::StatusOr<std::string> token = ReadToken(args.token_file);
    if (!token.ok()) return token.status();
    options.bearer_token = *std::move(token);
  }
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(args.target, options);
  if (!client.ok()) return cli::UsageError(client.status());
  return client;
}

// The position of "migrate" when it is the command (after global options
// only), else -1: its arguments go to the Python tool untouched, --help too.
int MigrateCommandAt(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "migrate") return i;
    if (arg.rfind('-', 0) != 0) return -1;  // another command
    if (arg.find('=') != std::string::npos) continue;
    const CLI::Option* option = app.get_option_no_throw(arg);
    if (option != nullptr && option->get_type_size() != 0) ++i;  // skip its value
  }
  return -1;
}

int RunMigrate(int argc, char** argv, int at) {
  absl::StatusOr<cli::MigrateTool> tool = cli::FindMigrateTool("/proc/self/exe");
  if (!tool.ok()) return cli::ReportError(cli::UsageError(tool.status()), std::cerr);
  absl::Status failed = cli::ExecMigrateTool(*tool, std::vector<std::string>(argv + at + 1, argv + argc));
  return cli::ReportError(cli::UsageError(failed), std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"npu: command line client of npuserve, simulated Da Vinci NPUs over gRPC", "npu"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may also follow the command
  app.set_version_flag("--version", npu::VersionLine("npu"), "print the version and exit");

  GlobalArgs global;
  app.add_option("--target", global.target, "server address HOST:PORT")->capture_default_str();
  app.add_option("--timeout", global.timeout_s, "deadline of each call in seconds (0 = none)")
      ->capture_default_str();
  app.add_option("--token-file", global.token_file, "file holding a bearer token");
  app.add_flag("--tls", global.tls, "use TLS with the system's root certificates");
  app.add_option("--tls-ca", global.tls_ca, "PEM root certificates; implies --tls")->type_name("CA.pem");
  app.add_option("--tls-cert", global.tls_cert, "PEM client certificate for mutual TLS (with --tls-key); implies --tls")
      ->type_name("CERT.pem");
  app.add_option("--tls-key", global.tls_key, "PEM private key of --tls-cert")->type_name("KEY.pem");

  CLI::App* devices = app.add_subcommand("devices", "list the server's devices");
  CLI::App* health = app.add_subcommand("health", "print SERVING or NOT_SERVING; exit 0 only when serving");
  CLI::App* stats = app.add_subcommand("stats", "print server counters and device utilization");

  cli::RunCommandArgs run_args;
  CLI::App* run = app.add_subcommand("run", "run a graph on .npy inputs, write .npy outputs");
  run->add_option("graph", run_args.graph_path,
                  "an ONNX model (.onnx, e.g. from torch.onnx.export; the server imports it) or npu.v1.Graph "
                  "JSON; registered once per content, any size")
      ->type_name("GRAPH.json|MODEL.onnx")
      ->required();
  run->add_option("--input,-i", run_args.inputs,
                  "NAME=FILE.npy or NAME=handle:ID (a tensor on the device), once per graph input")
      ->allow_extra_args(false);
  run->add_option("--output-dir,-o", run_args.output_dir, "directory for NAME.npy outputs")
      ->required();
  run->add_option("--device", run_args.device, "npu:N (cuda:N is accepted)")->capture_default_str();
  run->add_flag("--profile", run_args.profile, "print the modeled op summary (msprof op_summary columns)");
  run->add_option("--op-summary", run_args.op_summary_path, "write the modeled op summary as CSV")
      ->type_name("FILE.csv");
  run->add_option("--profile-dir", run_args.profile_dir,
                  "write the Ascend PyTorch Profiler's files (kernel_details.csv, op_statistic.csv, op_summary.csv, "
                  "trace_view.json) under DIR/..._ascend_pt/ASCEND_PROFILER_OUTPUT")
      ->type_name("DIR");
  run->add_option("--trace", run_args.trace_path, "write a Chrome trace-event JSON (Perfetto) of the run")
      ->type_name("FILE.json");
  run->add_flag("--debug", run_args.debug, "also write every intermediate to DIR/intermediates/");
  run->add_option("--keep", run_args.keep, "output to keep on the device as a handle")
      ->allow_extra_args(false);
  run->add_option("--float-mode", run_args.float_mode,
                  "fp16 conversions saturate (+-65504, NaN 0) or give inf/NaN; default: the preset's "
                  "(ascend910 saturation, ascend910b inf_nan)")
      ->type_name("saturation|inf_nan");
  run->add_flag("--overflow-check", run_args.overflow_check,
                "run unfused and list the nodes whose results overflowed, in topological order, naming the first "
                "(msprobe's overflow_check)");
  run->add_option("--overflow-nums", run_args.overflow_nums, "with --overflow-check: list at most N nodes; -1: all")
      ->capture_default_str();

  cli::CompareCommandArgs compare_args;
  CLI::App* compare = app.add_subcommand(
      "compare", "msprobe's precision comparison: every node's outputs on the NPU against the fp32 bench "
                 "(what a GPU computes), the first diverging node named");
  compare->add_option("graph", compare_args.run.graph_path, "an ONNX model or npu.v1.Graph JSON")
      ->type_name("GRAPH.json|MODEL.onnx")
      ->required();
  compare->add_option("--input,-i", compare_args.run.inputs, "NAME=FILE.npy, once per graph input")
      ->allow_extra_args(false);
  compare->add_option("--output-dir,-o", compare_args.run.output_dir,
                      "directory for compare_result.csv, diff_analyze.json and compare.png")
      ->required();
  compare->add_option("--device", compare_args.run.device, "npu:N (cuda:N is accepted)")->capture_default_str();
  compare->add_option("--bench", compare_args.bench, "the bench's numerics")->type_name("fp32")->capture_default_str();
  compare->add_option("--float-mode", compare_args.run.float_mode,
                      "the NPU run's fp16 conversions; default: the preset's")
      ->type_name("saturation|inf_nan");

  std::string upload_file, upload_device = "npu:0", download_handle, download_file;
  std::vector<std::string> free_handles;
  CLI::App* upload = app.add_subcommand("upload", "put a .npy tensor in device memory; prints its handle");
  upload->add_option("file", upload_file, "the tensor")->type_name("FILE.npy")->required();
  upload->add_option("--device", upload_device, "npu:N")->capture_default_str();
  CLI::App* download = app.add_subcommand("download", "write a device tensor (a handle) to a .npy file");
  download->add_option("handle", download_handle, "from npu upload or npu run --keep")->required();
  download->add_option("--output,-o", download_file, "where to write it")->type_name("FILE.npy")->required();
  CLI::App* free_cmd = app.add_subcommand("free", "free device tensors");
  free_cmd->add_option("handles", free_handles, "handles to free")->required();
  CLI::App* handles = app.add_subcommand("handles", "list this tenant's device tensors");

  cli::LoadCommandArgs load_args;
  std::string load_concurrency = "1";
  std::string load_concurrency_range;
  bool no_server_profile = false;
  CLI::App* load = app.add_subcommand(
      "load", "load-test a graph: throughput, latency percentiles, server time; a row per concurrency level");
  CLI::Option* load_graph = load->add_option("graph", load_args.graph_path, "graph as npu.v1.Graph JSON, or an ONNX model")
                                ->type_name("GRAPH.json|MODEL.onnx");
  CLI::Option* load_model =
      load->add_option("--model", load_args.model,
                       "instead of a graph file: a model the server serves by name (its model repository's, with "
                       "its config.pbtxt's dynamic batching); every input from --input")
          ->excludes(load_graph);
  load->add_option("--model-version", load_args.model_version, "with --model: the version (default: the highest)")
      ->needs(load_model);
  load->add_flag("--inline-graph", load_args.inline_graph,
                 "send the graph with every run instead of registering it (automatic for several servers)");
  load->add_option("--input,-i", load_args.inputs, "NAME=FILE.npy; inputs not given are random")
      ->allow_extra_args(false);
  CLI::Option* levels =
      load->add_option("--concurrency,-c", load_concurrency, "concurrent callers per step, e.g. 1,4,16,64")
          ->capture_default_str();
  load->add_option("--concurrency-range", load_concurrency_range,
                   "steps START to END (inclusive) by STEP callers, e.g. 1:8:1 (perf_analyzer's)")
      ->type_name("START:END:STEP")
      ->excludes(levels);
  load->add_option("--rate", load_args.rate, "fixed request rate per step, req/s (0 = closed loop)")
      ->capture_default_str();
  load->add_option("--requests,-n", load_args.requests, "measured requests per window")->capture_default_str();
  load->add_option("--warmup", load_args.warmup, "unmeasured requests per step before the first window")
      ->capture_default_str();
  load->add_option("--stability-percentage", load_args.stability_percentage,
                   "repeat windows until the last 3 agree within P% in throughput and mean latency (0 = one window)")
      ->capture_default_str();
  load->add_option("--max-windows", load_args.max_windows, "with --stability-percentage: windows per step, at most")
      ->capture_default_str();
  load->add_option("--duration", load_args.duration_s, "seconds per step, at most")->capture_default_str();
  load->add_flag("--no-server-profile", no_server_profile,
                 "do not ask for the profile (the server ms and device us columns read nan)");
  load->add_option("--format", load_args.format, "table, json (one object per line) or csv")
      ->capture_default_str();
  load->add_option("--device", load_args.device, "npu:N")->capture_default_str();
  load->add_option("--seed", load_args.seed, "seed of the random inputs")->capture_default_str();

  cli::TrainCommandArgs train_args;
  CLI::App* train = app.add_subcommand("train", "train a model on the server's NPUs (apex amp, DDP): a line per epoch");
  train->add_option("model", train_args.model_path, "the forward model: ONNX (torch.onnx.export) or npu.v1.Graph JSON")
      ->type_name("MODEL.onnx|GRAPH.json")
      ->required();
  train->add_option("--data", train_args.data_path, "NumPy archive (np.savez) of the examples and labels")
      ->type_name("DATA.npz")
      ->required();
  train->add_option("--x-key", train_args.x_key, "the archive's examples, [N, ...] float32")->capture_default_str();
  train->add_option("--y-key", train_args.y_key, "the archive's labels: int64 classes, or float32 targets for mse")
      ->capture_default_str();
  train->add_option("--loss", train_args.loss, "cross_entropy or mse")->capture_default_str();
  train->add_option("--optimizer", train_args.optimizer, "sgd, momentum, adam or adamw")->capture_default_str();
  train->add_option("--lr", train_args.lr, "learning rate")->capture_default_str();
  train->add_option("--momentum", train_args.momentum, "for --optimizer momentum")->capture_default_str();
  train->add_option("--weight-decay", train_args.weight_decay, "L2 (sgd, adam) or decoupled (adamw)")
      ->capture_default_str();
  train->add_option("--batch-size", train_args.batch_size, "global batch, split over --devices")->capture_default_str();
  train->add_option("--epochs", train_args.epochs, "passes over the training rows")->capture_default_str();
  train->add_option("--val-split", train_args.val_split, "the last fraction of the rows, held out for validation")
      ->capture_default_str();
  train->add_option("--amp", train_args.amp, "apex opt level: O0 (fp32), O1, O2 (fp16 model, fp32 masters), O3 (pure fp16)")
      ->capture_default_str();
  train->add_option("--loss-scale", train_args.loss_scale,
                    "S (static), dynamic or dynamic:INIT (default: dynamic for O1/O2, 1 for O0/O3)");
  train->add_option("--devices", train_args.devices, "data-parallel devices, e.g. npu:0,npu:1 (cuda:N accepted)")
      ->capture_default_str();
  train->add_option("--seed", train_args.seed, "the rows' order each epoch, dropout")->capture_default_str();
  train->add_option("--float-mode", train_args.float_mode,
                    "fp16 conversions of every step saturate or give inf/NaN; default: the preset's")
      ->type_name("saturation|inf_nan");
  train->add_option("--metrics-csv", train_args.metrics_csv, "a row per epoch")->type_name("FILE.csv");
  train->add_option("--save-onnx", train_args.save_onnx, "the trained model as ONNX (npu run runs it)")
      ->type_name("OUT.onnx");
  train->add_option("--checkpoint", train_args.checkpoint, "write a checkpoint at the end")->type_name("FILE");
  train->add_option("--resume", train_args.resume, "start from a checkpoint")->type_name("FILE");
  train->add_option("--profile-dir", train_args.profile_dir,
                    "write the Ascend PyTorch Profiler's files of the last 100 steps, one folder per rank: "
                    "kernel_details, op_statistic, op_summary, trace_view, step_trace_time, communication(_matrix)")
      ->type_name("DIR");
  train->add_option("--trace", train_args.trace, "Chrome trace of the last full-batch step, every device")
      ->type_name("FILE.json");

  // Listed in --help; run by RunMigrate before parsing, since its options are the tool's.
  app.add_subcommand("migrate",
                     "report what a PyTorch GPU training script changes on an NPU, write a converted copy, "
                     "change_list.csv and unsupported_op.csv (npu migrate --help)");
  if (const int at = MigrateCommandAt(app, argc, argv); at > 0) return RunMigrate(argc, argv, at);

  if (argc < 2) {
    std::cerr << app.help();
    return cli::kExitUsageError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::vector<std::string> rest = app.remaining();
    if (app.get_subcommands().empty() && !rest.empty()) {
      std::vector<std::string> commands;
      for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; })) {
        commands.push_back(c->get_name());
      }
      std::cerr << "npu: error: unknown command \"" << rest.front() << "\" (commands: "
                << absl::StrJoin(commands, ", ") << ")\n";
    } else {
      std::cerr << "npu: error: " << e.what() << "\n";
    }
    std::cerr << "run 'npu --help' for usage\n";
    return cli::kExitUsageError;
  }

  absl::StatusOr<std::unique_ptr<Client>> client = ConnectFromArgs(global);
  if (!client.ok()) return cli::ReportError(client.status(), std::cerr);

  absl::Status status;
  if (*devices) {
    status = cli::RunDevicesCommand(**client, std::cout);
  } else if (*stats) {
    status = cli::RunStatsCommand(**client, std::cout);
  } else if (*health) {
    absl::StatusOr<bool> serving = cli::RunHealthCommand(**client, std::cout);
    if (!serving.ok()) return cli::ReportError(serving.status(), std::cerr);
    return *serving ? cli::kExitOk : cli::kExitServerError;
  } else if (*upload) {
    status = cli::RunUploadCommand(**client, upload_file, upload_device, std::cout);
  } else if (*download) {
    status = cli::RunDownloadCommand(**client, download_handle, download_file, std::cout);
  } else if (*free_cmd) {
    status = cli::RunFreeCommand(**client, free_handles, std::cout);
  } else if (*handles) {
    status = cli::RunHandlesCommand(**client, std::cout);
  } else if (*run) {
    status = cli::RunRunCommand(**client, run_args, std::cout, std::cerr);
  } else if (*compare) {
    status = cli::RunCompareCommand(**client, compare_args, std::cout, std::cerr);
  } else if (*train) {
    train_args.progress = isatty(STDOUT_FILENO) != 0;  // a bar per epoch on a terminal, none in logs and pipes
    status = cli::RunTrainCommand(**client, train_args, std::cout, std::cerr);
  } else if (*load) {
    absl::StatusOr<std::vector<int>> levels = load_concurrency_range.empty()
                                                  ? cli::ParseConcurrencyList(load_concurrency)
                                                  : cli::ParseConcurrencyRange(load_concurrency_range);
    if (!levels.ok()) return cli::ReportError(levels.status(), std::cerr);
    load_args.concurrency = *std::move(levels);
    load_args.server_profile = !no_server_profile;
    load_args.progress = isatty(STDERR_FILENO) != 0;
    status = cli::RunLoadCommand(**client, load_args, std::cout, std::cerr);
  }
  return cli::ReportError(status, std::cerr);
}
