// The ONNX opsets the importer serves, and how each op's history in them
// decides whether, and in which form, a node runs. A model's default-domain
// opset (opset_import "" or "ai.onnx") must be present and served; then each
// node is checked against its op's version at that opset (ONNX's Changelog):
// an op or attribute from a later opset, an attribute that has become an
// input, an input from a later opset, are refused naming the op and both
// opsets; a node whose op meant something else at the model's opset (Softmax
// before 13 coerces its input to 2-D at `axis`) is rewritten into nodes that
// compute what that opset says. The table is data (OpsetChanges), so the
// next change is one row; docs/onnx.md's table is generated from it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "onnx/onnx_pb.h"

namespace npu::onnxio {

inline constexpr int kMinServedOpset = 7;  // multidirectional broadcasting; before it ops took "broadcast"
inline constexpr int kMaxServedOpset = 21;

struct OpsetChange {
  enum Kind {
    kIntroduced,        // the op exists from `opset`
    kAttributeAdded,    // attribute `name` exists from `opset`
    kAttributeRemoved,  // attribute `name` exists before `opset` only; `note`: what took its place
    kValueAdded,        // attribute `name` may be `value` from `opset`
    kValueRemoved,      // attribute `name` may be `value` before `opset` only
    kInputAdded,        // input `input` (`name`) exists from `opset`; `note`: its earlier form
    kRewritten,         // before `opset` the op computed something else: nodes are rewritten (`note`: how)
    kServedFrom,        // the versions before `opset` are refused (`note`: why)
    kNoted,             // a change the server's op follows by itself (`note`: how)
  };
  const char* op;
  int opset;
  Kind kind;
  const char* name = "";
  const char* value = "";
  int input = -1;
  const char* note = "";
};

absl::Span<const OpsetChange> OpsetChanges();

// The model's default-domain opset: INVALID_ARGUMENT when it imports none,
// imports it twice, or imports one outside [kMinServedOpset, kMaxServedOpset].
absl::StatusOr<int> DefaultOpset(const ::onnx::ModelProto& model);

// Problems of the kind the importer reports all at once: the message, and the
// nodes that have it.
using NodeProblems = std::map<std::string, std::vector<std::string>>;

// Every problem of `node` (named `name`) at `opset`, added to `problems`.
void CheckNodeOpset(const ::onnx::NodeProto& node, const std::string& name, int opset, NodeProblems& problems);

// Checks every node of `graph` at `opset` and rewrites those whose op
// computed something else then (kRewritten) into today's form. Node names
// are as the importer gives them (unnamed: "<op>_<index>").
void AdaptToOpset(::onnx::GraphProto& graph, int opset, NodeProblems& problems);

// docs/onnx.md's table of OpsetChanges (held equal by a test).
std::string OpsetTableMarkdown();

}  // namespace npu::onnxio
