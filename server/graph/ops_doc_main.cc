// npu-ops-doc: prints the op table of docs/ops.md from the op registry
// (tests/graph/ops_doc_test.cc fails when the file's copy differs).
#include <cstdio>

#include "server/graph/ops_doc.h"

int main() {
  std::fputs(npu::graph::OpsMarkdownTable().c_str(), stdout);
  return 0;
}
