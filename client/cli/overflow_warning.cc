#include "client/cli/overflow_warning.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/float_mode_arg.h"
#include "client/cli/text_table.h"

namespace npu::client::cli {
namespace {

// Elements the node wrote (its outputs' shapes, as the profile describes them); 0 if not described.
uint64_t OutputElements(const npu::v1::NodeProfile& node) {
  uint64_t total = 0;
  for (const npu::v1::TensorDesc& t : node.outputs()) {
    uint64_t n = 1;
    for (int64_t d : t.shape()) n *= static_cast<uint64_t>(d > 0 ? d : 0);
    total += n;
  }
  return total;
}

}  // namespace

int ListOverflowingNodes(const npu::v1::Profile& profile, int limit, std::ostream& out) {
  std::vector<const npu::v1::NodeProfile*> hit;
  for (const npu::v1::NodeProfile& node : profile.nodes()) {
    if (node.overflow_elements() > 0) hit.push_back(&node);
  }
  const std::string where = absl::StrFormat("%s, %s mode", profile.preset().empty() ? profile.device() : profile.preset(),
                                            FloatModeWord(profile.float_mode()));
  if (hit.empty()) {
    out << absl::StrFormat("overflow check (%s): no node overflowed (%d nodes ran)\n", where, profile.nodes_size());
    return 0;
  }
  out << absl::StrFormat("overflow check (%s): %d of %d nodes overflowed; the first is \"%s\" (%s)\n", where,
                         hit.size(), profile.nodes_size(), hit[0]->name(), hit[0]->op_type());
  TextTable table({"#", "node", "op", "overflowed", "results"});
  const size_t shown = limit < 0 ? hit.size() : std::min(hit.size(), static_cast<size_t>(limit));
  for (size_t i = 0; i < shown; ++i) {
    const uint64_t of = OutputElements(*hit[i]);
    table.AddRow({absl::StrCat(i + 1), hit[i]->name(), hit[i]->op_type(), absl::StrCat(hit[i]->overflow_elements()),
                  of > 0 ? absl::StrCat(of) : "-"});
  }
  table.Print(out);
  if (shown < hit.size()) {
    out << absl::StrFormat("(%d more not listed: --overflow-nums %d; -1 lists all)\n", hit.size() - shown, limit);
  }
  return static_cast<int>(hit.size());
}

int WarnAboutOverflow(const npu::v1::Profile& profile, std::ostream& out) {
  int nodes = 0;
  for (const npu::v1::NodeProfile& node : profile.nodes()) {
    if (node.overflow_elements() == 0) continue;
    ++nodes;
    // A fused node's count spans its original nodes' stores, not only its
    // outputs, so it is not given as a fraction of them.
    const uint64_t of = node.fused_nodes_size() > 0 ? 0 : OutputElements(node);
    out << absl::StrFormat("warning: overflow in node \"%s\" (%s): %d%s results saturated to +-65504 or became "
                           "inf/NaN%s\n",
                           node.name(), node.op_type(), node.overflow_elements(),
                           of > 0 ? absl::StrFormat(" of %d", of) : "",
                           node.fused_nodes_size() > 0
                               ? absl::StrFormat(" (counted over the results of its %d fused nodes)",
                                                 node.fused_nodes_size())
                               : "");
  }
  if (nodes > 0) {
    out << absl::StrFormat(
        "warning: %d node%s overflowed on %s (msprof's overflow alarm): later ops computed on clipped values. "
        "Scale the inputs, keep the op in float32 (Cast), or, when training, lower the loss scale\n",
        nodes, nodes == 1 ? "" : "s", profile.preset().empty() ? profile.device() : profile.preset());
  }
  return nodes;
}

}  // namespace npu::client::cli
