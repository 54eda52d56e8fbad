#include "server/core/auth_tokens.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npu::core {

absl::StatusOr<AuthTokens> AuthTokens::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the token file \"", path, "\""));
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

absl::StatusOr<AuthTokens> AuthTokens::Parse(absl::string_view text, const std::string& source) {
  AuthTokens tokens;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_no, ": expected `TOKEN TENANT`, got ", fields.size(), " fields"));
    }
    if (!tokens.tenants_.emplace(std::string(fields[0]), std::string(fields[1])).second) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", line_no, ": token listed twice"));
    }
  }
  if (tokens.tenants_.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": no tokens"));
  return tokens;
}

absl::StatusOr<std::string> AuthTokens::TenantFor(absl::string_view authorization) const {
  if (authorization.empty()) {
    return absl::UnauthenticatedError("this server requires a bearer token (authorization: Bearer TOKEN)");
  }
  absl::string_view token = authorization;
  if (!absl::ConsumePrefix(&token, "Bearer ") && !absl::ConsumePrefix(&token, "bearer ")) {
    return absl::UnauthenticatedError("the authorization metadata is not of the form \"Bearer TOKEN\"");
  }
  auto it = tenants_.find(std::string(absl::StripAsciiWhitespace(token)));
  if (it == tenants_.end()) return absl::UnauthenticatedError("unknown bearer token");
  return it->second;
}

}  // namespace npu::core
