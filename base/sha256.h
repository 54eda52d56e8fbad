// SHA-256 of bytes as lowercase hex: the content hash that identifies a model
// (server-side registration dedup; the client computes the same to ask first).
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace npu {

std::string Sha256Hex(absl::string_view bytes);

// Incremental form, for bytes that arrive in chunks.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(absl::string_view bytes);
  std::string HexDigest();  // ends the hash

 private:
  void* ctx_;  // EVP_MD_CTX
};

}  // namespace npu
