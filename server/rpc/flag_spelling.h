// npu-server's flags are abseil flags, whose names are C++ identifiers
// (--max_queue); the `npu` command line spells its options with dashes
// (--max-queue). The server accepts both spellings.
#pragma once

namespace npu::rpc {

// Rewrites, in place, every "--flag-name[=value]" and "-flag-name[=value]" in
// argv[1..argc) to its underscore spelling. Only the name changes: the value
// after '=' and arguments that are not flags (a value given as the next
// argument, a lone "--") stay as they are.
void AcceptDashedFlagNames(int argc, char** argv);

}  // namespace npu::rpc
