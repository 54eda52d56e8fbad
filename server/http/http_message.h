// An HTTP/1.1 request as the server's handlers see it (framing and content
// coding already removed) and the response they fill in.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace npu::http {

struct HttpHeader {
  std::string name;  // lower case: field names are case-insensitive
  std::string value;  // leading and trailing whitespace removed
};

struct HttpRequest {
  std::string method;  // case-sensitive, as sent ("GET")
  std::string target;  // the request-target as sent
  std::string path;    // percent-decoded; "/" for an absolute-form target without one
  std::string query;   // after '?', as sent
  int minor_version = 1;  // HTTP/1.0 or HTTP/1.1
  std::vector<HttpHeader> headers;
  std::string body;  // the body's bytes, without chunked framing or Content-Encoding

  // The first field with that (case-insensitive) name, or nullptr.
  const std::string* Header(absl::string_view name) const;
  std::string HeaderOr(absl::string_view name, absl::string_view fallback = "") const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::vector<HttpHeader> headers;  // besides Content-Type, Content-Length, Date and Connection
  std::string body;
  bool close = false;  // the connection closes after this response

  void SetHeader(absl::string_view name, absl::string_view value);
};

// "OK", "Not Found", ...; "Unknown" for a status without a phrase here.
const char* ReasonPhrase(int status);

// ASCII lower case of `s`.
std::string Lower(absl::string_view s);

}  // namespace npu::http
