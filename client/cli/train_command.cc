#include "client/cli/train_command.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/cli/ascend_profiler_files.h"
#include "client/cli/chrome_trace.h"
#include "client/cli/cli_status.h"
#include "client/cli/epoch_order.h"
#include "client/cli/float_mode_arg.h"
#include "client/cli/train_progress.h"
#include "client/graph_json.h"
#include "client/npz.h"
#include "client/trainer.h"

namespace npu::client::cli {
namespace {

absl::Status Usage(const std::string& message) { return UsageError(absl::InvalidArgumentError(message)); }

absl::Status ConfigureOptimizer(const TrainCommandArgs& a, v1::OptimizerConfig* o) {
  if (a.optimizer == "sgd") {
    o->set_kind(v1::OptimizerConfig::SGD);
  } else if (a.optimizer == "momentum") {
    o->set_kind(v1::OptimizerConfig::MOMENTUM);
    o->mutable_momentum()->set_value(a.momentum);
  } else if (a.optimizer == "adam") {
    o->set_kind(v1::OptimizerConfig::ADAM);
  } else if (a.optimizer == "adamw") {
    o->set_kind(v1::OptimizerConfig::ADAMW);
  } else {
    return Usage(absl::StrCat("--optimizer ", a.optimizer, " is not one of sgd, momentum, adam, adamw"));
  }
  o->set_lr(a.lr);
  o->set_weight_decay(a.weight_decay);
  return absl::OkStatus();
}

absl::Status ConfigureAmp(const TrainCommandArgs& a, v1::AmpConfig* amp) {
  if (a.amp == "O0") {
    amp->set_opt_level(v1::AmpConfig::O0);
  } else if (a.amp == "O1") {
    amp->set_opt_level(v1::AmpConfig::O1);
  } else if (a.amp == "O2") {
    amp->set_opt_level(v1::AmpConfig::O2);
  } else if (a.amp == "O3") {
    amp->set_opt_level(v1::AmpConfig::O3);
  } else {
    return Usage(absl::StrCat("--amp ", a.amp, " is not one of O0, O1, O2, O3"));
  }
  // apex's defaults: a dynamic scale for O1 and O2, 1 for O0 and O3.
  const bool unscaled = a.amp == "O0" || a.amp == "O3";
  const std::string scale = a.loss_scale.empty() ? (unscaled ? "1" : "dynamic") : a.loss_scale;
  double value = 0;
  if (scale == "dynamic") {
    amp->mutable_dynamic();
  } else if (absl::StartsWith(scale, "dynamic:")) {
    if (!absl::SimpleAtod(scale.substr(8), &value)) return Usage(absl::StrCat("--loss-scale ", scale, ": INIT is not a number"));
    amp->mutable_dynamic()->set_init_scale(value);
  } else if (absl::SimpleAtod(scale, &value)) {
    amp->set_static_scale(value);
  } else {
    return Usage(absl::StrCat("--loss-scale ", scale, " is not a number, dynamic or dynamic:INIT"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::CreateTrainerRequest> TrainerRequest(const TrainCommandArgs& a) {
  v1::CreateTrainerRequest req;
  if (absl::EndsWith(a.model_path, ".onnx")) {
    std::ifstream f(a.model_path, std::ios::binary);
    if (!f) return UsageError(absl::NotFoundError(absl::StrCat("cannot read \"", a.model_path, "\"")));
    req.set_onnx_model(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
  } else {
    auto graph = LoadGraphJson(a.model_path);
    if (!graph.ok()) return UsageError(graph.status());
    *req.mutable_graph() = *std::move(graph);
  }
  if (a.loss == "cross_entropy") {
    req.set_loss(v1::CROSS_ENTROPY);
  } else if (a.loss == "mse") {
    req.set_loss(v1::MSE);
  } else {
    return Usage(absl::StrCat("--loss ", a.loss, " is not one of cross_entropy, mse"));
  }
  if (auto s = ConfigureOptimizer(a, req.mutable_optimizer()); !s.ok()) return s;
  if (auto s = ConfigureAmp(a, req.mutable_amp()); !s.ok()) return s;
  for (absl::string_view d : absl::StrSplit(a.devices, ',', absl::SkipEmpty())) req.add_devices(std::string(d));
  req.set_seed(a.seed);
  auto float_mode = ParseFloatModeArg(a.float_mode);
  if (!float_mode.ok()) return float_mode.status();
  req.set_float_mode(*float_mode);
  return req;
}

// Rows `order[begin, end)` of `t`, in that order.
v1::Tensor Gather(const v1::Tensor& t, const std::vector<int64_t>& order, size_t begin, size_t end) {
  const size_t row = t.data().size() / static_cast<size_t>(t.shape(0));
  v1::Tensor out = t;
  out.set_shape(0, static_cast<int64_t>(end - begin));
  std::string data(row * (end - begin), '\0');
  for (size_t i = begin; i < end; ++i) std::memcpy(data.data() + (i - begin) * row, t.data().data() + order[i] * row, row);
  out.set_data(std::move(data));
  return out;
}

absl::Status WriteFile(const std::string& path, const std::string& bytes, const char* what) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) return absl::PermissionDeniedError(absl::StrCat("cannot write the ", what, " to \"", path, "\""));
  return absl::OkStatus();
}

}  // namespace

absl::Status RunTrainCommand(Client& client, const TrainCommandArgs& a, std::ostream& out, std::ostream& err) {
  if (a.batch_size < 1) return Usage(absl::StrCat("--batch-size ", a.batch_size, " must be at least 1"));
  if (a.epochs < 0) return Usage(absl::StrCat("--epochs ", a.epochs, " must be >= 0"));
  if (!(a.val_split >= 0 && a.val_split < 1)) return Usage(absl::StrCat("--val-split ", a.val_split, " must be in [0, 1)"));
  auto data = ReadNpz(a.data_path);
  if (!data.ok()) return UsageError(data.status());
  for (const std::string& key : {a.x_key, a.y_key}) {
    if (!data->contains(key) || data->at(key).shape_size() == 0) {
      return Usage(absl::StrCat("\"", a.data_path, "\" has no array \"", key, "\" with a first (batch) dimension"));
    }
  }
  const v1::Tensor& x = data->at(a.x_key);
  const v1::Tensor& y = data->at(a.y_key);
  if (x.shape(0) != y.shape(0)) {
    return Usage(absl::StrCat("\"", a.x_key, "\" has ", x.shape(0), " rows, \"", a.y_key, "\" ", y.shape(0)));
  }
  const size_t rows = static_cast<size_t>(x.shape(0));
  const size_t val_rows = static_cast<size_t>(static_cast<double>(rows) * a.val_split);
  const size_t train_rows = rows - val_rows;
  if (train_rows == 0) return Usage("no rows are left to train on");
  auto request = TrainerRequest(a);
  if (!request.ok()) return request.status();
  auto trainer = Trainer::Create(client, *request);
  if (!trainer.ok()) return trainer.status();
  if (!(*trainer)->info().notice().empty()) err << "npu train: " << (*trainer)->info().notice() << "\n";
  if (!a.resume.empty()) {
    std::ifstream f(a.resume, std::ios::binary);
    v1::TrainerCheckpoint c;
    if (!f || !c.ParseFromIstream(&f)) {
      return Usage(absl::StrCat("\"", a.resume, "\" is not a checkpoint (npu train --checkpoint)"));
    }
    if (auto s = (*trainer)->RestoreCheckpoint(c); !s.ok()) return s;
  }
  std::ofstream csv;
  if (!a.metrics_csv.empty()) {
    csv.open(a.metrics_csv, std::ios::trunc);
    if (!csv) return UsageError(absl::PermissionDeniedError(absl::StrCat("cannot write \"", a.metrics_csv, "\"")));
    csv << "epoch,train_loss,val_loss,val_accuracy,loss_scale,skipped_steps,device_time_us,host_time_ms\n";
  }
  std::vector<int64_t> val(val_rows);
  std::iota(val.begin(), val.end(), static_cast<int64_t>(train_rows));
  const v1::Tensor val_x = Gather(x, val, 0, val_rows), val_y = Gather(y, val, 0, val_rows);
  EpochOrder orders(train_rows, a.seed);
  const size_t batch = static_cast<size_t>(a.batch_size);
  const int64_t steps = static_cast<int64_t>((train_rows + batch - 1) / batch);
  std::vector<v1::Profile> traced;  // --trace: the last full-batch step's profile, per device
  std::deque<ProfiledStep> profiled;  // --profile-dir: the last kProfiledSteps steps
  constexpr size_t kProfiledSteps = 100;
  int64_t global_step = 0;
  for (int64_t epoch = 1; epoch <= a.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int64_t> order = orders.Next();
    TrainProgress progress(out, a.progress, epoch, a.epochs, steps);
    double loss_sum = 0, device_us = 0, scale = 0;
    int64_t skipped = 0;
    for (size_t b = 0; b < train_rows; b += batch) {
      const size_t e = std::min(train_rows, b + batch);
      auto step = (*trainer)->Step(Gather(x, order, b, e), Gather(y, order, b, e), /*profile=*/true);
      if (!step.ok()) {
        progress.Clear();
        return step.status();
      }
      loss_sum += step->loss() * static_cast<double>(e - b);
      skipped += step->skipped();
      scale = step->next_loss_scale();
      double slowest = 0;  // the devices run a step side by side
      for (const v1::Profile& p : step->profiles()) slowest = std::max(slowest, p.device_time_us());
      device_us += slowest;
      ++global_step;
      if (!a.profile_dir.empty()) {
        profiled.push_back({global_step, {step->profiles().begin(), step->profiles().end()}});
        if (profiled.size() > kProfiledSteps) profiled.pop_front();
      }
      if (!a.trace.empty() && (e - b == batch || traced.empty())) {
        traced.assign(step->profiles().begin(), step->profiles().end());
      }
      progress.Update(static_cast<int64_t>(b / batch) + 1, static_cast<int64_t>(e), loss_sum / static_cast<double>(e));
    }
    progress.Clear();
    double val_loss = 0, val_accuracy = 0;
    if (val_rows > 0) {
      auto eval = (*trainer)->Evaluate(val_x, val_y);
      if (!eval.ok()) return eval.status();
      val_loss = eval->loss();
      val_accuracy = eval->accuracy();
    }
    const double host_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const double train_loss = loss_sum / static_cast<double>(train_rows);
    out << absl::StrFormat(
        "epoch %d/%d  train_loss %.4f  val_loss %.4f  val_accuracy %.4f  loss_scale %g  skipped %d  "
        "device %.1f us  host %.0f ms\n",
        epoch, a.epochs, train_loss, val_loss, val_accuracy, scale, skipped, device_us, host_ms);
    out.flush();
    if (csv.is_open()) {
      csv << absl::StrFormat("%d,%.6g,%.6g,%.6g,%g,%d,%.3f,%.3f\n", epoch, train_loss, val_loss, val_accuracy, scale,
                             skipped, device_us, host_ms);
      csv.flush();
    }
  }
  if (!a.save_onnx.empty()) {
    auto exported = (*trainer)->Export(v1::ExportRequest::ONNX);
    if (!exported.ok()) return exported.status();
    if (auto s = WriteFile(a.save_onnx, exported->onnx_model(), "trained model"); !s.ok()) return UsageError(s);
  }
  if (!a.trace.empty() && !traced.empty()) {
    if (auto s = WriteChromeTraceFile(traced, a.trace); !s.ok()) return UsageError(s);
    out << "trace of the last full-batch step -> " << a.trace << " (open in https://ui.perfetto.dev)\n";
  }
  if (!a.profile_dir.empty() && !profiled.empty()) {
    auto folders = WriteAscendProfilerFiles(a.profile_dir, {profiled.begin(), profiled.end()}, /*training=*/true);
    if (!folders.ok()) return UsageError(folders.status());
    out << "profiler files of steps " << profiled.front().step << "-" << profiled.back().step << " (one folder per rank) -> "
        << a.profile_dir << "\n";
  }
  if (!a.checkpoint.empty()) {
    auto c = (*trainer)->SaveCheckpoint();
    if (!c.ok()) return c.status();
    if (auto s = WriteFile(a.checkpoint, c->SerializeAsString(), "checkpoint"); !s.ok()) return UsageError(s);
  }
  return absl::OkStatus();
}

}  // namespace npu::client::cli
