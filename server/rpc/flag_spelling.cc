#include "server/rpc/flag_spelling.h"

#include <cctype>

namespace npu::rpc {

void AcceptDashedFlagNames(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char* name = argv[i];
    if (name[0] != '-') continue;
    name += name[1] == '-' ? 2 : 1;
    // A flag name starts with a letter: "-1" or "--" are values or the end of flags.
    if (!std::isalpha(static_cast<unsigned char>(name[0]))) continue;
    for (char* c = name; *c != '\0' && *c != '='; ++c) {
      if (*c == '-') *c = '_';
    }
  }
}

}  // namespace npu::rpc
