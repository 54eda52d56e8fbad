#include "server/graph/executor.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/device/cost_model.h"
#include "server/graph/guarded_call.h"
#include "server/graph/node_error.h"
#include "server/graph/value_addresses.h"

namespace npu::graph {
namespace {

void ToProto(const device::UnitCycles& u, v1::UnitCycles* p) {
  p->set_cube(u.cube);
  p->set_vector(u.vector);
  p->set_scalar(u.scalar);
  p->set_mte1(u.mte1);
  p->set_mte2(u.mte2);
  p->set_mte3(u.mte3);
  p->set_fixpipe(u.fixpipe);
}

// The layout msprof would name for a tensor: a convolution's (or pooling's)
// 4-D feature maps are NCHW, everything else is stored row-major (ND).
const char* FormatOf(const PlanNode& pn, const TensorType& t) {
  static const char* kSpatial[] = {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "BatchNormalization"};
  if (t.shape.size() != 4) return "ND";
  for (const char* op : kSpatial) {
    if (pn.node->op_type() == op) return "NCHW";
  }
  return "ND";
}

void Describe(const PlanNode& pn, const PlanValue& v, v1::TensorDesc* d) {
  const TensorType& t = v.type;
  d->set_name(v.name);
  for (int64_t dim : t.shape) d->add_shape(dim);
  d->set_dtype(t.dtype);
  d->set_format(FormatOf(pn, t));
}

void RecordNode(const Plan& plan, const PlanNode& pn, const device::OpWork& work, const device::ScheduledOp& op,
                double host_us, const device::DevicePreset& preset, v1::Profile& profile,
                std::vector<device::UnitCycles>& per_core) {
  v1::NodeProfile* np = profile.add_nodes();
  np->set_name(pn.node->name());
  np->set_op_type(pn.node->op_type());
  if (!pn.fused.empty()) {
    np->add_fused_nodes(pn.node->name());
    for (const v1::Node* n : pn.fused) {
      np->add_fused_nodes(n->name());
      np->mutable_name()->append("+" + n->name());
      np->mutable_op_type()->append("+" + n->op_type());
    }
  }
  np->set_task_type(device::TaskTypeName(work.task_type, preset.separated()));
  np->set_block_dim(op.block_dim);
  np->set_ready_cycle(op.ready);
  np->set_dispatch_cycle(op.dispatch);
  np->set_start_cycle(op.start);
  np->set_end_cycle(op.end);
  np->set_complete_cycle(op.complete);
  const uint64_t launch = op.tiles.empty() ? 0 : preset.CyclesOfNs(preset.task_launch_ns);
  np->set_wait_cycles(op.start > op.ready + launch ? op.start - op.ready - launch : 0);
  ToProto(op.busy, np->mutable_busy());
  device::TileWork total;
  for (const auto& t : work.tiles) total += t;
  np->set_overflow_elements(total.overflow_elements + work.comm.overflow_elements);
  np->set_comm_bytes(work.comm.bytes);
  np->mutable_bytes()->set_mte1(total.mte1_bytes());
  np->mutable_bytes()->set_mte2(total.mte2_bytes);
  np->mutable_bytes()->set_mte3(total.mte3_bytes);
  np->mutable_bytes()->set_fixpipe(total.fixpipe_bytes);
  np->set_hbm_bytes(op.hbm_bytes);
  np->set_l2_hit_bytes(op.l2_hit_bytes);
  for (int v : pn.inputs) {
    if (v >= 0) Describe(pn, plan.values[v], np->add_inputs());
  }
  for (int v : pn.outputs) Describe(pn, plan.values[v], np->add_outputs());
  np->set_host_time_us(host_us);
  for (const auto& t : op.tiles) {
    v1::TileSlice* s = np->add_tiles();
    s->set_core(t.core);
    s->set_start_cycle(t.start);
    s->set_end_cycle(t.end);
    ToProto(t.busy, s->mutable_busy());
    per_core[t.core] += t.busy;
  }
}

// The buffer a node's output is written to, per the plan's storage.
HostTensor OutputBuffer(const PlanValue& v, std::byte* arena, bool debug) {
  switch (v.storage) {
    case ValueStorage::kView:
      return HostTensor(v.type, nullptr, nullptr);  // the aliasing op points it at its input
    case ValueStorage::kArena:
      if (!debug) return HostTensor(v.type, nullptr, arena + v.arena_offset);
      [[fallthrough]];  // debug keeps every intermediate past the run: each its own buffer
    default:
      return HostTensor::Allocate(v.type);
  }
}

}  // namespace

absl::StatusOr<ExecResult> ExecutePlan(const Plan& plan, std::vector<HostTensor> inputs, const ExecOptions& options,
                                       device::DeviceSession& session) {
  using Clock = std::chrono::steady_clock;
  const auto run_start = Clock::now();
  if (inputs.size() != plan.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan takes ", plan.inputs.size(), " inputs, ", inputs.size(), " were bound"));
  }
  std::vector<HostTensor> values(plan.values.size());
  std::vector<uint64_t> ready_at(plan.values.size(), session.arrival_cycle);
  for (size_t i = 0; i < plan.values.size(); ++i) {
    if (plan.values[i].is_constant) values[i] = plan.values[i].constant;
  }
  for (size_t i = 0; i < plan.inputs.size(); ++i) values[plan.inputs[i]] = std::move(inputs[i]);
  std::vector<bool> is_output(plan.values.size(), false);
  for (int v : plan.outputs) is_output[v] = true;
  std::byte* arena = nullptr;
  if (plan.arena_bytes > 0 && !options.debug) {
    if (session.arena == nullptr) return absl::InternalError("the device session has no run arena");
    arena = session.arena->Reserve(plan.arena_bytes);
  }

  ExecResult result;
  // Device addresses of the values, for the L2 model (views filled as they are made).
  std::vector<device::AddressRange> addresses = ValueAddresses(plan, session.pool.NextFreshSpace());
  std::vector<device::UnitCycles> per_core(session.pool.cores().size());
  uint64_t first_start = UINT64_MAX, last_end = session.arrival_cycle;
  double model_us = 0;  // host time in the device model, for the profile

  for (int k = 0; k < static_cast<int>(plan.nodes.size()); ++k) {
    const PlanNode& pn = plan.nodes[k];
    if (session.cancel != nullptr && session.cancel->load(std::memory_order_relaxed)) {
      return absl::CancelledError(absl::StrCat("run stopped before ", NodeLabel(*pn.node), ": its caller gave up"));
    }
    // The plan's preset: the device's, in the float mode the plan was made for.
    RunContext ctx{*pn.node, NodeAttributes(*pn.node), {}, {}, plan.preset, {}};
    ctx.cancel = session.cancel;
    ctx.state = pn.state.get();
    ctx.float_status = result.overflow_elements;
    ctx.collective = options.collective.get();
    ctx.rank = options.rank;
    ctx.work.task_type = pn.op->task_type;
    uint64_t ready = session.arrival_cycle;
    for (int v : pn.inputs) {
      ctx.inputs.push_back(v < 0 ? nullptr : &values[v]);
      if (v >= 0) ready = std::max(ready, ready_at[v]);
    }
    for (int v : pn.outputs) ctx.outputs.push_back(OutputBuffer(plan.values[v], arena, options.debug));

    ctx.ready_cycle = ready;
    const auto t0 = Clock::now();
    if (WritesNothing(*pn.op, ctx.outputs)) {
      // every output is empty: no kernel is entered
    } else if (auto s = GuardedCall(*pn.node, "running", [&] { return pn.op->run(ctx); }); !s.ok()) {
      if (absl::StrContains(s.message(), NodeLabel(*pn.node))) return s;
      return absl::Status(s.code(), absl::StrCat(NodeLabel(*pn.node), ": ", s.message()));
    }
    const double host_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();

    for (int v : pn.inputs) ctx.work.reads.push_back(v < 0 ? device::AddressRange{} : addresses[v]);
    for (size_t j = 0; j < pn.outputs.size(); ++j) {
      const int v = pn.outputs[j], alias = pn.op->output_aliases_input;
      if (plan.values[v].storage == ValueStorage::kView) {
        // A view is its input's bytes: nothing written.
        if (j == 0 && alias >= 0 && alias < static_cast<int>(pn.inputs.size()) && pn.inputs[alias] >= 0) {
          addresses[v] = addresses[pn.inputs[alias]];
          addresses[v].bytes = std::min(addresses[v].bytes, plan.values[v].type.bytes());
        }
        continue;
      }
      ctx.work.writes.push_back(addresses[v]);
    }
    const auto model_start = Clock::now();
    const device::ScheduledOp op = session.pool.Schedule(ctx.work, ready);
    for (const auto& t : ctx.work.tiles) result.overflow_elements += t.overflow_elements;
    result.overflow_elements += ctx.work.comm.overflow_elements;
    if (!op.tiles.empty()) first_start = std::min(first_start, op.dispatch);
    last_end = std::max(last_end, op.complete);
    if (options.profile) RecordNode(plan, pn, ctx.work, op, host_us, session.preset, result.profile, per_core);
    model_us += std::chrono::duration<double, std::micro>(Clock::now() - model_start).count();

    for (size_t j = 0; j < pn.outputs.size(); ++j) {
      const int v = pn.outputs[j];
      values[v] = std::move(ctx.outputs[j]);
      ready_at[v] = op.complete;
      if (options.debug) result.intermediates.emplace_back(plan.values[v].name, values[v]);
    }
    // Drop references no later node reads; buffers of their own are freed now
    // (debug mode keeps references in intermediates).
    for (int v : pn.inputs) {
      if (v >= 0 && plan.values[v].last_use == k && !is_output[v] && !plan.values[v].is_constant) {
        values[v] = HostTensor();
      }
    }
  }

  // A kernel stopped part way leaves its output incomplete: never return it.
  if (session.cancel != nullptr && session.cancel->load(std::memory_order_relaxed)) {
    return absl::CancelledError("run stopped: its caller gave up");
  }
  for (int v : plan.outputs) result.outputs.push_back(values[v]);

  if (options.profile) {
    v1::Profile& p = result.profile;
    p.set_model_version(device::kCostModelVersion);
    p.set_device(options.device_id);
    p.set_preset(session.preset.name);
    p.set_clock_mhz(session.preset.clock_hz / 1e6);
    p.set_start_cycle(session.arrival_cycle);
    p.set_end_cycle(last_end);
    p.set_total_cycles(last_end - session.arrival_cycle);
    p.set_device_time_us(static_cast<double>(p.total_cycles()) / (session.preset.clock_hz / 1e6));
    p.set_queue_cycles(first_start == UINT64_MAX ? 0 : first_start - session.arrival_cycle);
    p.set_host_time_us(std::chrono::duration<double, std::micro>(Clock::now() - run_start).count());
    p.set_model_time_us(model_us);
    p.set_arena_bytes(options.debug ? 0 : plan.arena_bytes);
    p.set_core_architecture(session.preset.separated() ? "separated" : "coupled");
    p.set_overflow_elements(result.overflow_elements);
    p.set_float_mode(plan.preset.fp16_saturation ? v1::FLOAT_MODE_SATURATION : v1::FLOAT_MODE_INF_NAN);
    p.set_bench(plan.preset.exact_cube_operands);
    for (size_t c = 0; c < per_core.size(); ++c) {
      v1::CoreProfile* cp = p.add_cores();
      cp->set_core(static_cast<int>(c));
      cp->set_kind(session.pool.cores()[c].kind);
      ToProto(per_core[c], cp->mutable_busy());
    }
  }
  return result;
}

}  // namespace npu::graph
