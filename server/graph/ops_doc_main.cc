// npu-ops-doc: prints the op table of docs/ops.md from the op registry and
// the trainer's gradient rules (tests/train/gradient_docs_test.cc fails when
// the file's copy differs); `npu-ops-doc gradients` prints docs/training.md's
// list of the ops with a gradient (the same test); `npu-ops-doc vector-passes`
// prints the Vector pass table of docs/device-model.md
// (tests/device/vector_passes_test.cc).
#include <cstdio>
#include <string>

#include "server/device/vector_passes.h"
#include "server/graph/ops_doc.h"
#include "server/train/gradient_docs.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "vector-passes") {
    std::fputs(npu::device::VectorPassesMarkdown().c_str(), stdout);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "gradients") {
    std::fputs(npu::train::GradientOpsMarkdown().c_str(), stdout);
    return 0;
  }
  if (argc > 1) {
    std::fprintf(stderr, "usage: npu-ops-doc [vector-passes | gradients]\n");
    return 2;
  }
  std::fputs(npu::graph::OpsMarkdownTable({npu::train::GradientColumn()}).c_str(), stdout);
  return 0;
}
