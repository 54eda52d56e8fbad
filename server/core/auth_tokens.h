// Bearer-token authentication: a token file maps each token to a tenant.
//
// File format, one token per line: `TOKEN TENANT`; blank lines and lines
// starting with '#' are ignored. Several tokens may name the same tenant.
#pragma once

#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npu::core {

class AuthTokens {
 public:
  static absl::StatusOr<AuthTokens> Load(const std::string& path);
  static absl::StatusOr<AuthTokens> Parse(absl::string_view text, const std::string& source);

  // The tenant of an "authorization" metadata value ("Bearer TOKEN");
  // UNAUTHENTICATED when it is missing, malformed or unknown. The token is
  // never echoed back.
  absl::StatusOr<std::string> TenantFor(absl::string_view authorization) const;

  size_t size() const { return tenants_.size(); }

 private:
  std::unordered_map<std::string, std::string> tenants_;  // token -> tenant
};

}  // namespace npu::core
