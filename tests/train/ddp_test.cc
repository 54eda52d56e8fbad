// Data parallelism across devices of one server: the global batch split over
// the devices, gradients averaged by HCCL's ring allreduce in DDP's buckets,
// the same update on every device. Replicas stay bitwise identical; a step on
// 4 devices follows the step on 1 with the same global batch; the step's
// profile shows the allreduce as HCCL tasks of the ring formula's length,
// overlapping the backward pass; an overflow on one device skips the step on
// all; a cancelled step leaves nothing waiting; a checkpoint restored into a
// new trainer continues bitwise as the uninterrupted run.
#include <future>
#include <thread>

#include "base/mutex.h"
#include "gtest/gtest.h"
#include "server/device/collective_cost.h"
#include "server/train/graph_editor.h"
#include "server/train/trainer.h"
#include "tests/train/train_test_support.h"

namespace npu::train {
namespace {

using graph::HostTensor;
using testing::BitwiseEqual;
using testing::DeviceFor;

std::vector<device::Device*> Devices(int n, const std::string& preset = "ascend910") {
  std::vector<device::Device*> d;
  for (int i = 0; i < n; ++i) d.push_back(&DeviceFor(preset, i));
  return d;
}

v1::Tensor Random(std::vector<int64_t> shape, float scale, uint32_t& seed) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  int64_t n = 1;
  for (int64_t d : shape) t.add_shape(d), n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(seed >> 8) / 16777216.0f * 2.0f - 1.0f);
  }
  t.set_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  return t;
}

// x [B, 32] -> fc1 (64) -> BatchNorm -> Relu -> fc2 (48) -> Relu -> fc3 (10).
ModelSpec Mlp() {
  uint32_t seed = 11;
  v1::Graph g;
  g.set_name("mlp");
  v1::ValueInfo* in = g.add_inputs();
  in->set_name("x");
  in->set_dtype(v1::FLOAT32);
  in->add_shape(16), in->add_shape(32);
  auto init = [&](const std::string& name, v1::Tensor t) {
    v1::Initializer* i = g.add_initializers();
    i->set_name(name);
    *i->mutable_tensor() = std::move(t);
  };
  init("w1", Random({64, 32}, 0.25f, seed));
  init("b1", Random({64}, 0.1f, seed));
  v1::Tensor ones = Random({64}, 0, seed);
  std::vector<float> one(64, 1.0f);
  ones.set_data(std::string(reinterpret_cast<const char*>(one.data()), 256));
  init("gamma", ones);
  init("beta", Random({64}, 0, seed));
  init("rm", Random({64}, 0, seed));
  init("rv", ones);
  init("w2", Random({48, 64}, 0.2f, seed));
  init("b2", Random({48}, 0.1f, seed));
  init("w3", Random({10, 48}, 0.2f, seed));
  init("b3", Random({10}, 0.1f, seed));
  auto node = [&](const std::string& name, const std::string& op, std::vector<std::string> ins, std::string out,
                  bool trans_b = false) {
    v1::Node* n = g.add_nodes();
    n->set_name(name);
    n->set_op_type(op);
    for (auto& i : ins) n->add_inputs(i);
    n->add_outputs(out);
    if (trans_b) (*n->mutable_attributes())["transB"] = AttrInt(1);
  };
  node("fc1", "Gemm", {"x", "w1", "b1"}, "h1", true);
  node("bn", "BatchNormalization", {"h1", "gamma", "beta", "rm", "rv"}, "n1");
  node("relu1", "Relu", {"n1"}, "a1");
  node("fc2", "Gemm", {"a1", "w2", "b2"}, "h2", true);
  node("relu2", "Relu", {"h2"}, "a2");
  node("fc3", "Gemm", {"a2", "w3", "b3"}, "logits", true);
  g.add_outputs("logits");
  return DescribeModel(g).value();
}

HostTensor Batch(int rows, int step, float scale = 2.0f) {
  HostTensor x = HostTensor::Allocate({v1::FLOAT32, {rows, 32}});
  uint32_t seed = 100 + step;
  for (int i = 0; i < rows * 32; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x.mutable_as<float>()[i] = scale * (static_cast<float>(seed >> 8) / 16777216.0f * 2.0f - 1.0f);
  }
  return x;
}

HostTensor Labels(int rows, int step) {
  HostTensor y = HostTensor::Allocate({v1::INT64, {rows}});
  for (int i = 0; i < rows; ++i) y.mutable_as<int64_t>()[i] = (i * 3 + step) % 10;
  return y;
}

TrainConfig Config(AmpLevel amp = AmpLevel::kO2) {
  TrainConfig c;
  c.amp = amp;
  c.loss_scale = {.dynamic = true, .scale = 65536};
  c.optimizer.kind = OptimizerKind::kMomentum;
  c.optimizer.lr = 0.05;
  c.optimizer.weight_decay = 1e-4;
  return c;
}

TEST(DdpTest, ReplicasStayBitwiseIdentical) {
  auto t = Trainer::Create(Mlp(), Config(), Devices(4));
  ASSERT_TRUE(t.ok()) << t.status();
  for (int s = 0; s < 5; ++s) {
    auto r = (*t)->Step(Batch(16, s), Labels(16, s), false);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  const Replica r0 = (*t)->ReplicaOf(0);
  for (size_t d = 1; d < 4; ++d) {
    const Replica rd = (*t)->ReplicaOf(d);
    for (size_t i = 0; i < r0.params.size(); ++i) {
      EXPECT_TRUE(BitwiseEqual(r0.params[i], rd.params[i])) << "device " << d << " param " << i;
      if (r0.masters[i].bytes() > 0) EXPECT_TRUE(BitwiseEqual(r0.masters[i], rd.masters[i]));
      for (size_t k = 0; k < r0.state[i].size(); ++k) EXPECT_TRUE(BitwiseEqual(r0.state[i][k], rd.state[i][k]));
    }
  }
}

TEST(DdpTest, FourDevicesFollowOneWithTheSameGlobalBatch) {
  // At O0 the only differences are the order of the sums (each device's
  // batch-sum, then the ring's) and BatchNorm's statistics, per shard as in
  // DDP without SyncBatchNorm: the losses agree within a few percent.
  auto one = Trainer::Create(Mlp(), Config(AmpLevel::kO0), Devices(1));
  auto four = Trainer::Create(Mlp(), Config(AmpLevel::kO0), Devices(4));
  ASSERT_TRUE(one.ok() && four.ok());
  for (int s = 0; s < 6; ++s) {
    const double a = (*one)->Step(Batch(16, s), Labels(16, s), false)->loss;
    const double b = (*four)->Step(Batch(16, s), Labels(16, s), false)->loss;
    EXPECT_NEAR(a, b, 0.05 * a) << "step " << s;
  }
}

TEST(DdpTest, WithoutBatchNormFourDevicesMatchOneToRounding) {
  // Remove the BatchNorm (its per-shard statistics are the one real
  // difference): then 4 shards' weighted gradients summed are the batch's
  // gradient, up to the order of fp32 sums and the Cube's fp16 operands.
  ModelSpec spec = Mlp();
  v1::Graph g = spec.graph;
  for (auto& n : *g.mutable_nodes()) {
    if (n.name() == "relu1") n.set_inputs(0, "h1");
  }
  google::protobuf::RepeatedPtrField<v1::Node> kept;
  for (auto& n : *g.mutable_nodes()) {
    if (n.name() != "bn") *kept.Add() = n;
  }
  g.mutable_nodes()->Swap(&kept);
  google::protobuf::RepeatedPtrField<v1::Initializer> inits;
  for (auto& i : *g.mutable_initializers()) {
    if (i.name() != "gamma" && i.name() != "beta" && i.name() != "rm" && i.name() != "rv") *inits.Add() = i;
  }
  g.mutable_initializers()->Swap(&inits);
  auto plain = DescribeModel(g);
  ASSERT_TRUE(plain.ok()) << plain.status();
  auto one = Trainer::Create(*plain, Config(AmpLevel::kO0), Devices(1));
  auto four = Trainer::Create(*plain, Config(AmpLevel::kO0), Devices(4));
  for (int s = 0; s < 4; ++s) {
    const double a = (*one)->Step(Batch(16, s), Labels(16, s), false)->loss;
    const double b = (*four)->Step(Batch(16, s), Labels(16, s), false)->loss;
    EXPECT_NEAR(a, b, 1e-3 * a) << "step " << s;
  }
  const Replica r1 = (*one)->ReplicaOf(0), r4 = (*four)->ReplicaOf(0);
  for (size_t i = 0; i < r1.params.size(); ++i) EXPECT_LE(testing::RelativeMaxError(r4.params[i], r1.params[i]), 2e-3);
}

TEST(DdpTest, UnevenShardsWeighTheirLoss) {
  auto t = Trainer::Create(Mlp(), Config(), Devices(4));
  ASSERT_TRUE(t.ok());
  auto r = (*t)->Step(Batch(10, 0), Labels(10, 0), false);  // shards of 3, 3, 2, 2
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->loss, 1.0);
  EXPECT_LT(r->loss, 4.0);
  auto too_small = (*t)->Step(Batch(3, 0), Labels(3, 0), false);
  EXPECT_EQ(too_small.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DdpTest, TheStepProfileShowsTheAllreduceOverlappingBackward) {
  TrainConfig c = Config();
  c.ddp = {.bucket_bytes = 4096, .first_bucket_bytes = 1024};  // small buckets: several allreduces
  auto t = Trainer::Create(Mlp(), c, Devices(4));
  ASSERT_TRUE(t.ok());
  auto r = (*t)->Step(Batch(16, 0), Labels(16, 0), true);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->profiles.size(), 4u);
  const device::DevicePreset preset = DeviceFor("ascend910").preset();
  for (const v1::Profile& p : r->profiles) {
    SCOPED_TRACE(p.device());
    std::vector<const v1::NodeProfile*> hccl;
    for (const auto& n : p.nodes()) {
      if (n.task_type() == "HCCL") hccl.push_back(&n);
    }
    // Buckets: b3 + w3 (fp16, 980 B) | b2, w2 (6240 B) | b1, beta, gamma, w1 | the float status.
    ASSERT_GE(hccl.size(), 4u);
    for (const v1::NodeProfile* n : hccl) {
      EXPECT_EQ(n->end_cycle() - n->start_cycle(), device::RingAllReduceCycles(n->comm_bytes(), 4, preset)) << n->name();
      EXPECT_EQ(n->block_dim(), 0);
    }
    // The first bucket's allreduce runs while later backward nodes compute.
    const v1::NodeProfile& first = *hccl[0];
    bool overlapped = false;
    for (const auto& n : p.nodes()) {
      if (n.task_type() == "HCCL" || n.tiles_size() == 0) continue;
      overlapped = overlapped || (n.start_cycle() < first.end_cycle() && n.end_cycle() > first.start_cycle() &&
                                  n.name().rfind("grad/", 0) == 0);
    }
    EXPECT_TRUE(overlapped) << "no backward node overlaps " << first.name();
  }
  // Every device saw the same windows: the ring is one transfer.
  for (int k = 0; k < r->profiles[0].nodes_size(); ++k) {
    if (r->profiles[0].nodes(k).task_type() != "HCCL") continue;
    for (int d = 1; d < 4; ++d) {
      const auto& a = r->profiles[0].nodes(k);
      bool found = false;
      for (const auto& b : r->profiles[d].nodes()) {
        if (b.name() == a.name()) found = b.start_cycle() == a.start_cycle() && b.end_cycle() == a.end_cycle();
      }
      EXPECT_TRUE(found) << a.name();
    }
  }
}

TEST(DdpTest, AnOverflowOnOneDeviceSkipsTheStepOnAll) {
  auto t = Trainer::Create(Mlp(), Config(), Devices(4));
  ASSERT_TRUE(t.ok());
  // Rows 12..15 (device 3's shard) are huge: only its fp16 forward overflows.
  HostTensor x = Batch(16, 0);
  for (int i = 12 * 32; i < 16 * 32; ++i) x.mutable_as<float>()[i] *= 1e5f;
  const Replica before = (*t)->ReplicaOf(0);
  auto r = (*t)->Step(x, Labels(16, 0), false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->skipped);
  EXPECT_EQ(r->next_loss_scale, 32768);
  for (size_t d = 0; d < 4; ++d) {
    const Replica rd = (*t)->ReplicaOf(d);
    for (size_t i = 0; i < before.params.size(); ++i) EXPECT_TRUE(BitwiseEqual(before.params[i], rd.params[i]));
  }
}

// The trainer's lock does not span device work: while a step waits for its
// devices, its state can be read (a checkpoint, an export); the step commits
// afterwards.
TEST(DdpTest, AStepWaitingForItsDevicesDoesNotBlockReadingTheTrainersState) {
  auto t = Trainer::Create(Mlp(), Config(), Devices(1));
  ASSERT_TRUE(t.ok());
  device::Device& d = *Devices(1)[0];
  // Hold the device with a job that waits for the test's word, so the step queues behind it.
  Mutex mu;
  CondVar cv;
  bool held = false, release = false;
  d.Submit(
      [&](device::DeviceSession&) {
        MutexLock lock(&mu);
        held = true;
        cv.SignalAll();
        while (!release) cv.Wait(&mu);
      },
      nullptr, false, [](absl::Status) {});
  {
    MutexLock lock(&mu);
    while (!held) cv.Wait(&mu);
  }
  const int64_t before = (*t)->State().step;
  std::thread stepper([&] { EXPECT_TRUE((*t)->Step(Batch(16, 0), Labels(16, 0), false).ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the step is queued on the held device
  // Neither waits for the step (when the lock spanned the device run, both did, until it ended).
  auto read = std::async(std::launch::async, [&] {
    return std::make_pair((*t)->State().step, (*t)->TrainedModel().initializers_size());
  });
  const bool answered = read.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(answered) << "reading the state waited for the step's device";
  {
    MutexLock lock(&mu);
    release = true;
  }
  cv.SignalAll();
  stepper.join();
  const auto [step, initializers] = read.get();
  EXPECT_EQ(step, before);
  EXPECT_GT(initializers, 0);
  EXPECT_EQ((*t)->State().step, before + 1);
}

TEST(DdpTest, ACancelledStepLeavesNothingWaiting) {
  auto t = Trainer::Create(Mlp(), Config(), Devices(4));
  ASSERT_TRUE(t.ok());
  auto token = std::make_shared<device::CancelToken>();
  token->Cancel(absl::CancelledError("the client cancelled"));
  auto r = (*t)->Step(Batch(16, 0), Labels(16, 0), false, token);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  // Cancelled while running, from another thread: the step ends (cancelled or done), nothing hangs.
  for (int k = 0; k < 5; ++k) {
    auto live = std::make_shared<device::CancelToken>();
    std::thread canceller([live, k] {
      std::this_thread::sleep_for(std::chrono::microseconds(200 * k));
      live->Cancel(absl::DeadlineExceededError("the deadline passed"));
    });
    auto s = (*t)->Step(Batch(16, k), Labels(16, k), false, live);
    canceller.join();
    EXPECT_TRUE(s.ok() || s.status().code() == absl::StatusCode::kDeadlineExceeded) << s.status();
  }
  // And the trainer still trains, its replicas the same.
  ASSERT_TRUE((*t)->Step(Batch(16, 9), Labels(16, 9), false).ok());
  const Replica r0 = (*t)->ReplicaOf(0);
  for (size_t d = 1; d < 4; ++d) {
    for (size_t i = 0; i < r0.params.size(); ++i) EXPECT_TRUE(BitwiseEqual(r0.params[i], (*t)->ReplicaOf(d).params[i]));
  }
}

// Everything a checkpoint holds, compared bit for bit.
void ExpectSameState(const TrainerState& a, const TrainerState& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.updates, b.updates);
  EXPECT_EQ(a.loss_scale, b.loss_scale);
  EXPECT_EQ(a.clean_steps, b.clean_steps);
  auto same = [](const std::vector<HostTensor>& x, const std::vector<HostTensor>& y, const char* what) {
    ASSERT_EQ(x.size(), y.size()) << what;
    for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(BitwiseEqual(x[i], y[i])) << what << " " << i;
  };
  same(a.replica.params, b.replica.params, "parameter");
  same(a.replica.masters, b.replica.masters, "master");
  same(a.replica.buffers, b.replica.buffers, "running statistic");
  ASSERT_EQ(a.replica.state.size(), b.replica.state.size());
  for (size_t i = 0; i < a.replica.state.size(); ++i) same(a.replica.state[i], b.replica.state[i], "optimizer state");
}

TEST(CheckpointTest, ResumingGivesTheUninterruptedRunsBits) {
  TrainConfig c = Config();
  c.optimizer.kind = OptimizerKind::kAdamW;
  c.optimizer.lr = 1e-3;
  c.loss_scale = {.dynamic = true, .scale = 1024, .window = 2};  // the scale doubles every other step
  auto whole = Trainer::Create(Mlp(), c, Devices(2));
  auto first = Trainer::Create(Mlp(), c, Devices(2));
  auto resumed = Trainer::Create(Mlp(), c, Devices(2));
  ASSERT_TRUE(whole.ok() && first.ok() && resumed.ok());
  for (int s = 0; s < 6; ++s) ASSERT_TRUE((*whole)->Step(Batch(16, s), Labels(16, s), false).ok());
  for (int s = 0; s < 3; ++s) ASSERT_TRUE((*first)->Step(Batch(16, s), Labels(16, s), false).ok());
  const TrainerState checkpoint = (*first)->State();
  EXPECT_EQ(checkpoint.clean_steps, 1);  // mid-window: the restored scaler must know it
  ASSERT_TRUE((*resumed)->Restore(checkpoint).ok());
  for (int s = 3; s < 6; ++s) ASSERT_TRUE((*resumed)->Step(Batch(16, s), Labels(16, s), false).ok());
  ExpectSameState((*whole)->State(), (*resumed)->State());
  EXPECT_EQ((*resumed)->State().loss_scale, 8192);  // 1024 doubled three times
  // Every replica took the checkpoint, not only device 0.
  const Replica r1 = (*resumed)->ReplicaOf(1);
  for (size_t i = 0; i < r1.params.size(); ++i) {
    EXPECT_TRUE(BitwiseEqual(r1.params[i], (*whole)->ReplicaOf(1).params[i]));
  }
}

TEST(CheckpointTest, AStateOfAnotherOptimizerIsRefused) {
  TrainConfig adam = Config();
  adam.optimizer.kind = OptimizerKind::kAdam;
  auto from = Trainer::Create(Mlp(), adam, Devices(1));
  auto to = Trainer::Create(Mlp(), Config(), Devices(1));  // momentum: one slot per parameter, Adam two
  ASSERT_TRUE(from.ok() && to.ok());
  const TrainerState before = (*to)->State();
  const absl::Status s = (*to)->Restore((*from)->State());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  ExpectSameState(before, (*to)->State());  // nothing half-restored
}

}  // namespace
}  // namespace npu::train
