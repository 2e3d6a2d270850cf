#include "engine/reactor/request_parser.h"

#include <algorithm>
#include <cstring>

namespace fleetsched::engine {
namespace {

// Per header line: ": " and CRLF; the request line's own separators are charged once.
constexpr size_t kHeaderLineOverhead = 4;
constexpr size_t kRequestLineOverhead = 12;
constexpr size_t kMaxValueMatch = 32;
// A declared Content-Length is pre-reserved up to this size; past it the buffer grows as bytes
// arrive, so a client cannot make us allocate memory it never sends.
constexpr size_t kMaxBodyPrealloc = 4u << 20;
// A body that gets a buffer of its own gets this much more room, so the next request's head and
// a body of the same size fit in it together (headRoom()).
constexpr size_t kHeadSlack = 4096;

RequestParser* self(llhttp_t* p) { return static_cast<RequestParser*>(p->data); }

// ASCII case folding for matching against lower-case letters: libc tolower() is locale-aware
// and cost a quarter of the framing time.
char foldCase(char c) { return static_cast<char>(c | 0x20); }

bool equalsLower(std::string_view lower, std::string_view s) {
  return lower.size() == s.size() &&
         std::equal(s.begin(), s.end(), lower.begin(), [](char a, char b) { return foldCase(a) == b; });
}

}  // namespace

const llhttp_settings_t RequestParser::kSettings = [] {
  llhttp_settings_t s;
  llhttp_settings_init(&s);
  s.on_message_begin = &RequestParser::onMessageBegin;
  s.on_url = &RequestParser::onUrl;
  s.on_header_field = &RequestParser::onHeaderField;
  s.on_header_value = &RequestParser::onHeaderValue;
  s.on_header_value_complete = &RequestParser::onHeaderValueComplete;
  s.on_headers_complete = &RequestParser::onHeadersComplete;
  s.on_body = &RequestParser::onBody;
  s.on_message_complete = &RequestParser::onMessageComplete;
  return s;
}();

RequestParser::RequestParser(RequestLimits limits) : limits_(limits) { reset(); }

void RequestParser::reset() {
  llhttp_init(&parser_, HTTP_REQUEST, &kSettings);
  parser_.data = this;
  phase_ = Phase::kIdle;
  error_ = ParseError::kNone;
  pausedFor_ = Status::kNeedMore;
  sealPending_ = false;
  unsealed_ = false;
  target_.clear();
  body_.clear();
  retired_ = BodyBuffer();
}

size_t RequestParser::headRoom(size_t n, char** at) {
  retired_ = BodyBuffer();
  body_.clear();
  body_.reserve(std::max(n, body_.capacity()));
  *at = body_.allocation();
  return body_.capacity();
}

void RequestParser::sealBody() {
  body_.seal();
  unsealed_ = false;
}

const char* RequestParser::errorReason() const {
  switch (error_) {
    case ParseError::kNone:
      return "";
    case ParseError::kHeaderTooLarge:
      return "request header fields too large";
    case ParseError::kBodyTooLarge:
      return "request body too large";
    case ParseError::kMalformed:
      break;
  }
  const char* r = llhttp_get_error_reason(&parser_);
  return r && *r ? r : "malformed request";
}

RequestParser::Result RequestParser::feed(const char* data, size_t len) {
  if (error_ != ParseError::kNone) return {Status::kError, 0};
  feedBegin_ = data;
  size_t done = 0;
  while (done < len) {
    llhttp_errno_t err = llhttp_execute(&parser_, data + done, len - done);
    if (err == HPE_OK) return {Status::kNeedMore, len};
    if (err != HPE_PAUSED) {
      if (error_ == ParseError::kNone) error_ = ParseError::kMalformed;
      phase_ = Phase::kIdle;
      return {Status::kError, done};
    }
    done = static_cast<size_t>(llhttp_get_error_pos(&parser_) - data);
    llhttp_resume(&parser_);
    Status s = pausedFor_;
    pausedFor_ = Status::kNeedMore;
    if (sealPending_) {
      sealPending_ = false;
      // Padding a body read in place would overwrite the bytes after it: the caller takes them
      // first (bodyUnsealed()).
      if (done < len && body_.holds(data + done))
        unsealed_ = true;
      else
        body_.seal();
    }
    // 100-continue only matters if the client is actually waiting for it.
    if (s == Status::kExpectContinue && done < len) continue;
    return {s, done};
  }
  return {Status::kNeedMore, len};
}

bool RequestParser::addHeaderBytes(size_t n) {
  headerBytes_ += n;
  if (headerBytes_ <= limits_.maxHeaderBytes) return true;
  error_ = ParseError::kHeaderTooLarge;
  return false;
}

int RequestParser::onMessageBegin(llhttp_t* p) {
  RequestParser* s = self(p);
  s->phase_ = Phase::kHeaders;
  s->headerBytes_ = kRequestLineOverhead;
  s->target_.clear();
  s->fieldLen_ = 0;
  s->value_.clear();
  s->newLine_ = true;
  s->expectContinue_ = false;
  s->body_.clear();
  return 0;
}

int RequestParser::onUrl(llhttp_t* p, const char* at, size_t len) {
  RequestParser* s = self(p);
  if (!s->addHeaderBytes(len)) return HPE_USER;
  s->target_.append(at, len);
  return 0;
}

bool RequestParser::fieldIsExpect() const { return fieldLen_ == 6 && std::memcmp(field_, "expect", 6) == 0; }

int RequestParser::onHeaderField(llhttp_t* p, const char* at, size_t len) {
  RequestParser* s = self(p);
  if (s->newLine_) {
    s->newLine_ = false;
    s->fieldLen_ = 0;
    s->value_.clear();
    if (!s->addHeaderBytes(kHeaderLineOverhead)) return HPE_USER;
  }
  if (!s->addHeaderBytes(len)) return HPE_USER;
  // Only "expect" matters: keep one byte more than that, so longer names never match.
  for (size_t i = 0; i < len && s->fieldLen_ < sizeof s->field_; ++i)
    s->field_[s->fieldLen_++] = foldCase(at[i]);
  return 0;
}

int RequestParser::onHeaderValue(llhttp_t* p, const char* at, size_t len) {
  RequestParser* s = self(p);
  if (!s->addHeaderBytes(len)) return HPE_USER;
  if (s->fieldIsExpect() && s->value_.size() + len <= kMaxValueMatch) s->value_.append(at, len);
  return 0;
}

int RequestParser::onHeaderValueComplete(llhttp_t* p) {
  RequestParser* s = self(p);
  if (s->fieldIsExpect() && equalsLower("100-continue", s->value_)) s->expectContinue_ = true;
  s->newLine_ = true;
  return 0;
}

int RequestParser::onHeadersComplete(llhttp_t* p) {
  RequestParser* s = self(p);
  s->method_ = llhttp_get_method(p);
  s->http10_ = p->http_major == 1 && p->http_minor == 0;
  // Upgrades are not served: answer the request, then close instead of switching protocols.
  s->keepAlive_ = llhttp_should_keep_alive(p) != 0 && !p->upgrade;
  if (p->http_major != 1) return -1;
  s->declared_ = kUnknownLength;
  if (p->flags & F_CONTENT_LENGTH) {
    if (p->content_length > s->limits_.maxBodyBytes) {
      s->error_ = ParseError::kBodyTooLarge;
      return -1;
    }
    s->declared_ = p->content_length;
    // Not while the bytes being framed sit in the body buffer: onBody() decides there.
    if (!s->body_.holds(s->feedBegin_)) s->body_.reserve(std::min<uint64_t>(p->content_length, kMaxBodyPrealloc));
  }
  s->phase_ = Phase::kBody;
  if (s->expectContinue_) {
    s->pausedFor_ = Status::kExpectContinue;
    return HPE_PAUSED;
  }
  return 0;
}

size_t RequestParser::bodyRemaining() const {
  if (phase_ != Phase::kBody || error_ != ParseError::kNone || pausedFor_ != Status::kNeedMore) return 0;
  if ((parser_.flags & F_CHUNKED) != 0 || (parser_.flags & F_CONTENT_LENGTH) == 0) return 0;
  return static_cast<size_t>(parser_.content_length);
}

size_t RequestParser::bodyRoom(size_t n, char** at) {
  const size_t want = body_.size() + n;
  if (want > body_.capacity()) {
    // Grow geometrically up to the declared length (already checked against maxBodyBytes).
    const size_t declared = body_.size() + bodyRemaining();
    body_.reserve(std::max(want, std::min(declared, 2 * body_.capacity())));
  }
  *at = body_.tail();
  return std::min(n, body_.capacity() - body_.size());
}

int RequestParser::onBody(llhttp_t* p, const char* at, size_t len) {
  RequestParser* s = self(p);
  if (s->body_.size() + len > s->limits_.maxBodyBytes) {
    s->error_ = ParseError::kBodyTooLarge;
    return HPE_USER;
  }
  BodyBuffer& b = s->body_;
  if (b.size() == 0 && at != b.tail() && b.holds(at)) {
    // The head and the start of the body were read into the body buffer (headRoom()): a
    // declared body with room after the head stays there.
    const uint64_t room = static_cast<uint64_t>(b.allocation() + b.allocated() - at);
    if (s->declared_ != kUnknownLength && s->declared_ <= room && b.adopt(at)) {
      b.append(at, len);  // in place
      return 0;
    }
    // No room (or a chunked body): the body gets a buffer of its own. This one stays alive, as
    // the rest of the feed still points into it.
    s->retired_ = std::move(b);
    if (s->declared_ != kUnknownLength)
      b.reserve(std::min<uint64_t>(s->declared_, kMaxBodyPrealloc) + kHeadSlack);
  }
  s->copiedBodyBytes_ += b.append(at, len);
  return 0;
}

int RequestParser::onMessageComplete(llhttp_t* p) {
  RequestParser* s = self(p);
  s->sealPending_ = true;  // feed() pads the body
  s->phase_ = Phase::kIdle;
  s->pausedFor_ = Status::kComplete;
  return HPE_PAUSED;
}

}  // namespace fleetsched::engine
