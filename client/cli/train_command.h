// `npu train MODEL --data DATA.npz ...`: trains a model on the server
// (TrainingService, through client/trainer.h) on a NumPy archive, one line
// per epoch (and a CSV row with --metrics-csv), then saves what was asked:
// the trained ONNX model, a checkpoint.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "client/client.h"

namespace npu::client::cli {

struct TrainCommandArgs {
  std::string model_path;             // MODEL.onnx or GRAPH.json
  std::string data_path;              // DATA.npz
  std::string x_key = "x", y_key = "y";
  std::string loss = "cross_entropy";  // or mse
  std::string optimizer = "sgd";       // sgd, momentum, adam, adamw
  double lr = 0.01;
  double momentum = 0.9;
  double weight_decay = 0;
  int64_t batch_size = 32;
  int64_t epochs = 1;
  double val_split = 0.2;              // the last fraction of the rows, held out
  std::string amp = "O0";
  std::string loss_scale;              // S, dynamic, dynamic:INIT; "" = dynamic for O1/O2, 1 for O0
  std::string devices = "npu:0";       // comma-separated
  std::string float_mode;              // saturation or inf_nan; empty: the preset's (float_mode_arg.h)
  uint64_t seed = 0;                   // the order of the rows each epoch, dropout
  std::string metrics_csv;
  std::string save_onnx;
  std::string checkpoint;              // written at the end
  std::string resume;                  // read before the first step
  std::string trace;                   // the Chrome trace of the last full-batch step, every device's
  std::string profile_dir;             // the Ascend PyTorch Profiler's files (ascend_profiler_files.h)
  bool progress = false;               // a progress bar per epoch (stdout is a terminal)
};

absl::Status RunTrainCommand(Client& client, const TrainCommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace npu::client::cli
