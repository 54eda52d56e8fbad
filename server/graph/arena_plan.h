// Where each value of a plan lives during a run, decided once at plan time
// from liveness (in the spirit of TFLite's arena planner): intermediates share
// one block per run at planned offsets, so a run allocates nothing per node.
//
//   kInput     fed by the caller (request bytes or a device handle)
//   kConstant  an initializer; the plan owns its bytes
//   kArena     an intermediate at `arena_offset` in the run's arena
//   kHeap      its own buffer, because it outlives the run (a graph output,
//              or the buffer a graph output is a view of)
//   kView      output of an aliasing op (OpDef::output_aliases_input): the op
//              points it at its input's bytes, whose buffer lives as long as
//              every view of it
#pragma once

#include <cstdint>

namespace npu::graph {

struct Plan;

enum class ValueStorage : uint8_t { kInput, kConstant, kArena, kHeap, kView };

// Fills storage and arena_offset of every value and Plan::arena_bytes. Values
// whose lifetimes overlap never share bytes; a node's outputs never share
// bytes with its inputs. Offsets are 64-byte aligned. Placement is first fit
// in execution order: linear in the graph for the chains models are made of.
void AssignStorage(Plan& plan);

}  // namespace npu::graph
