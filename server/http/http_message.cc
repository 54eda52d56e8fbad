#include "server/http/http_message.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace npu::http {

const std::string* HttpRequest::Header(absl::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (absl::EqualsIgnoreCase(h.name, name)) return &h.value;
  }
  return nullptr;
}

std::string HttpRequest::HeaderOr(absl::string_view name, absl::string_view fallback) const {
  const std::string* v = Header(name);
  return v != nullptr ? *v : std::string(fallback);
}

void HttpResponse::SetHeader(absl::string_view name, absl::string_view value) {
  for (HttpHeader& h : headers) {
    if (absl::EqualsIgnoreCase(h.name, name)) {
      h.value = std::string(value);
      return;
    }
  }
  headers.push_back({std::string(name), std::string(value)});
}

std::string Lower(absl::string_view s) { return absl::AsciiStrToLower(s); }

const char* ReasonPhrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

}  // namespace npu::http
