// HTTP request framing (engine/reactor/request_parser): arbitrary bytes, read and fed the way
// the reactor's connection does it (engine/reactor/server_io.cpp): each read lands in the
// parser's body room inside a Content-Length body, in its head room between requests, else in a
// plain buffer; the bytes after a request whose body is unsealed are carried out before the
// body is sealed. The first input byte picks the read size (1..255 bytes, 0: the whole rest),
// so the same request is also framed split at every kind of boundary. After each complete
// request the target, the body and its padding are read back in full (ASan checks the bounds,
// the padding must be zero); an error ends the connection, as in the reactor.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "engine/reactor/request_parser.h"

using fleetsched::engine::kBodyPadding;
using fleetsched::engine::RequestLimits;
using fleetsched::engine::RequestParser;

namespace {

volatile size_t gSink;

void touch(RequestParser& p) {
  size_t sum = p.target().size() + p.method() + p.keepAlive() + p.http10();
  std::string_view body = p.body().view();
  for (char c : body) sum += static_cast<unsigned char>(c);
  for (size_t i = 0; i < kBodyPadding; ++i) {
    if (body.data()[body.size() + i] != 0) __builtin_trap();
  }
  gSink = sum;
}

// Frames `len` bytes at `data` (a read's bytes); false once the connection would close.
bool consume(RequestParser& p, const char* data, size_t len, std::string& carry) {
  while (len > 0) {
    RequestParser::Result r = p.feed(data, len);
    if (r.consumed > len) __builtin_trap();
    data += r.consumed;
    len -= r.consumed;
    switch (r.status) {
      case RequestParser::Status::kNeedMore:
        if (len != 0) __builtin_trap();
        break;
      case RequestParser::Status::kExpectContinue:
        break;
      case RequestParser::Status::kComplete:
        if (p.bodyUnsealed()) {
          carry.assign(data, len);
          data = carry.data();
          p.sealBody();
        }
        touch(p);
        break;
      case RequestParser::Status::kError:
        if (std::strlen(p.errorReason()) == 0) __builtin_trap();
        return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t step = data[0] == 0 ? size : data[0];
  const char* in = reinterpret_cast<const char*>(data) + 1;
  size_t left = size - 1;
  // Small limits, so that short inputs reach the 431 and 413 paths too.
  RequestParser p(RequestLimits{.maxHeaderBytes = 512, .maxBodyBytes = 4096});
  std::string plain, carry;
  while (left > 0) {
    size_t n = std::min(left, step);
    char* at = nullptr;
    if (const size_t remaining = p.bodyRemaining(); remaining > 0) {
      n = p.bodyRoom(std::min(n, remaining), &at);
      n = std::min({n, left, step});
    } else if (p.phase() == RequestParser::Phase::kIdle) {
      n = std::min(p.headRoom(n, &at), n);
    } else {
      plain.resize(n);
      at = plain.data();
    }
    std::memcpy(at, in, n);
    in += n;
    left -= n;
    if (!consume(p, at, n, carry)) break;
  }
  return 0;
}
