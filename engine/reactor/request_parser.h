// RequestParser: HTTP/1.x request framing over bytes, no IO (llhttp underneath). Feed it whatever
// arrived; it stops after each complete request so the caller can take it (pipelining), and
// reports how many bytes it consumed. Requests may be split at any byte. Chunked bodies are
// de-chunked into the padded body buffer. Limits are enforced while parsing, before buffering.
//
//   RequestParser p(limits);
//   auto r = p.feed(data, len);   // kNeedMore | kExpectContinue | kComplete | kError
//   if (r.status == kComplete) { use p.method(), p.target(), p.body(); }  // then feed the rest
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/reactor/body_buffer.h"

namespace fleetsched::engine {

struct RequestLimits {
  size_t maxHeaderBytes = 64 * 1024;
  size_t maxBodyBytes = 128u << 20;
};

enum class ParseError : uint8_t { kNone, kMalformed, kHeaderTooLarge, kBodyTooLarge };

class RequestParser {
 public:
  enum class Status : uint8_t {
    kNeedMore,        // everything consumed, request not complete yet
    kExpectContinue,  // headers done and the client sent "Expect: 100-continue"; feed the rest
    kComplete,        // one request complete; `consumed` stops right after it
    kError,           // framing lost: answer error() and close the connection
  };
  // Idle: between requests (nothing buffered). Headers / Body: inside a request.
  enum class Phase : uint8_t { kIdle, kHeaders, kBody };
  struct Result {
    Status status;
    size_t consumed;
  };

  explicit RequestParser(RequestLimits limits = {});
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  Result feed(const char* data, size_t len);
  // Forgets any partial request (after an error, or to reuse the parser).
  void reset();

  Phase phase() const { return phase_; }
  ParseError error() const { return error_; }
  const char* errorReason() const;

  // The last complete request (valid until the next feed()).
  uint8_t method() const { return method_; }  // llhttp_method_t
  std::string_view target() const { return target_; }
  bool keepAlive() const { return keepAlive_; }
  bool http10() const { return http10_; }
  BodyBuffer& body() { return body_; }

  // Content-Length body bytes still to come for the request being received; 0 outside such a
  // body (headers, idle, chunked).
  size_t bodyRemaining() const;
  // The Content-Length of the request being received, once its headers are done; 0 without one
  // (chunked, or no body).
  uint64_t declaredLength() const { return declared_ == kUnknownLength ? 0 : declared_; }
  // Room for up to `n` (> 0, ≤ bodyRemaining()) more body bytes at the body's end: a read into it,
  // then feed() of exactly those bytes, frames them without copying. Returns the room's size.
  size_t bodyRoom(size_t n, char** at);
  // Between requests (phase() == kIdle): room for the next read at the start of the body
  // buffer, at least `n` bytes and all the room the buffer already has. A read into it, then
  // feed() of exactly those bytes, frames the request there: a Content-Length body that fits
  // stays where it landed, after the head, and is not copied. Returns the room's size.
  size_t headRoom(size_t n, char** at);
  // After a kComplete from a feed of bytes read into headRoom() that went on past the request
  // (a pipelined request followed it), the body is not yet padded, because padding it would
  // overwrite those bytes: take them (the fed range after `consumed`) first, then sealBody().
  bool bodyUnsealed() const { return unsealed_; }
  void sealBody();
  // Body bytes copied out of fed buffers so far (bytes read in place through bodyRoom() or
  // headRoom() are not copied); cumulative over the parser's life.
  uint64_t copiedBodyBytes() const { return copiedBodyBytes_; }

 private:
  static int onMessageBegin(llhttp_t* p);
  static int onUrl(llhttp_t* p, const char* at, size_t len);
  static int onHeaderField(llhttp_t* p, const char* at, size_t len);
  static int onHeaderValue(llhttp_t* p, const char* at, size_t len);
  static int onHeaderValueComplete(llhttp_t* p);
  static int onHeadersComplete(llhttp_t* p);
  static int onBody(llhttp_t* p, const char* at, size_t len);
  static int onMessageComplete(llhttp_t* p);
  static const llhttp_settings_t kSettings;

  bool addHeaderBytes(size_t n);
  bool fieldIsExpect() const;

  llhttp_t parser_;
  RequestLimits limits_;
  Phase phase_ = Phase::kIdle;
  ParseError error_ = ParseError::kNone;
  Status pausedFor_ = Status::kNeedMore;
  bool sealPending_ = false;  // the message completed; feed() pads its body once it knows the rest
  bool unsealed_ = false;
  bool keepAlive_ = true;
  bool http10_ = false;
  bool expectContinue_ = false;
  bool newLine_ = true;  // the next header-field callback starts a new header line
  uint8_t fieldLen_ = 0;
  uint8_t method_ = 0;
  size_t headerBytes_ = 0;
  uint64_t copiedBodyBytes_ = 0;
  uint64_t declared_ = 0;  // Content-Length of the request being received; kUnknownLength if none
  static constexpr uint64_t kUnknownLength = UINT64_MAX;
  const char* feedBegin_ = nullptr;  // the first byte of the feed() in progress
  std::string target_;
  char field_[7];      // first bytes of the current header name, case-folded
  std::string value_;  // current header value when the name matters
  BodyBuffer body_;
  // A body buffer holding fed bytes whose request's body did not fit after its head: kept
  // until the next headRoom() (the caller may still be framing its last bytes).
  BodyBuffer retired_;
};

}  // namespace fleetsched::engine
