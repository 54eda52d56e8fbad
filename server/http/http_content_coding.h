// Content-Encoding of request and response bodies (RFC 9110 §8.4): gzip and
// deflate request bodies are inflated with the body limit applied to what
// comes out, a piece at a time, so a small body that would inflate past the
// limit is refused when it passes it (a "zip bomb" costs the limit, not its
// inflated size); JSON and text answers are gzipped for clients that accept it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "server/http/http_message.h"
#include "server/http/http_request_reader.h"

namespace npu::http {

// Replaces `request.body` by its decoded bytes and drops Content-Encoding;
// an error (415 for a coding not served, 400 for corrupt data, 413 past
// `limits.max_body_bytes`) otherwise. Without Content-Encoding: nothing.
std::optional<HttpError> DecodeContentEncoding(HttpRequest& request, const HttpLimits& limits);

// Whether the request's Accept-Encoding takes gzip (a q of 0 refuses it).
bool AcceptsGzip(const HttpRequest& request);

// Gzips `response.body` (and says so in Content-Encoding) when the request
// accepts it and the answer is JSON or text of at least 1 KiB.
void CompressResponse(const HttpRequest& request, HttpResponse& response);

}  // namespace npu::http
