// Byte-level tests of HTTP request framing: no sockets.
#include "engine/reactor/request_parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace fleetsched::engine {
namespace {

using Status = RequestParser::Status;
using Phase = RequestParser::Phase;

std::string post(std::string_view path, std::string_view body, std::string_view extra = "") {
  std::string r = "POST ";
  r += path;
  r += " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
  r += extra;
  r += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  r += body;
  return r;
}

TEST(RequestParser, ParsesOneRequestAndReportsConsumedBytes) {
  RequestParser p;
  std::string req = post("/filter", R"({"Pod":{}})");
  auto r = p.feed(req.data(), req.size());
  EXPECT_EQ(r.status, Status::kComplete);
  EXPECT_EQ(r.consumed, req.size());
  EXPECT_EQ(p.method(), HTTP_POST);
  EXPECT_EQ(p.target(), "/filter");
  EXPECT_EQ(p.body().view(), R"({"Pod":{}})");
  EXPECT_TRUE(p.keepAlive());
  EXPECT_EQ(p.phase(), Phase::kIdle);
}

TEST(RequestParser, StopsAfterEachPipelinedRequest) {
  RequestParser p;
  std::string a = post("/filter", "aaa"), b = post("/prioritize", "bb"), c = "GET /healthz HTTP/1.1\r\n\r\n";
  std::string all = a + b + c;
  size_t off = 0;
  std::vector<std::pair<std::string, std::string>> got;
  while (off < all.size()) {
    auto r = p.feed(all.data() + off, all.size() - off);
    ASSERT_EQ(r.status, Status::kComplete);
    off += r.consumed;
    got.emplace_back(std::string(p.target()), std::string(p.body().view()));
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], std::make_pair(std::string("/filter"), std::string("aaa")));
  EXPECT_EQ(got[1], std::make_pair(std::string("/prioritize"), std::string("bb")));
  EXPECT_EQ(got[2], std::make_pair(std::string("/healthz"), std::string("")));
}

TEST(RequestParser, RequestSplitAtEveryByte) {
  std::string req =
      post("/api/scheduler/bind", R"({"PodName":"p","Node":"n"})", "X-Long-Header: abcdefghij\r\n");
  RequestParser p;
  for (size_t i = 0; i + 1 < req.size(); ++i) {
    auto r = p.feed(req.data() + i, 1);
    ASSERT_EQ(r.status, Status::kNeedMore) << "at byte " << i;
    ASSERT_EQ(r.consumed, 1u);
    ASSERT_NE(p.phase(), Phase::kIdle);
  }
  auto r = p.feed(req.data() + req.size() - 1, 1);
  EXPECT_EQ(r.status, Status::kComplete);
  EXPECT_EQ(p.target(), "/api/scheduler/bind");
  EXPECT_EQ(p.body().view(), R"({"PodName":"p","Node":"n"})");
}

TEST(RequestParser, PhaseMovesFromHeadersToBody) {
  RequestParser p;
  std::string req = post("/filter", "0123456789");
  size_t headEnd = req.find("\r\n\r\n") + 4;
  p.feed(req.data(), 10);
  EXPECT_EQ(p.phase(), Phase::kHeaders);
  p.feed(req.data() + 10, headEnd - 10);
  EXPECT_EQ(p.phase(), Phase::kBody);
  auto r = p.feed(req.data() + headEnd, req.size() - headEnd);
  EXPECT_EQ(r.status, Status::kComplete);
}

TEST(RequestParser, BodyIsPaddedWithZeroes) {
  RequestParser p;
  std::string req = post("/filter", "{}");
  ASSERT_EQ(p.feed(req.data(), req.size()).status, Status::kComplete);
  const char* end = p.body().data() + p.body().size();
  for (size_t i = 0; i < kBodyPadding; ++i) ASSERT_EQ(end[i], 0) << i;
}

TEST(RequestParser, DechunksChunkedBodies) {
  RequestParser p;
  std::string req =
      "POST /filter HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n";
  auto r = p.feed(req.data(), req.size());
  EXPECT_EQ(r.status, Status::kComplete);
  EXPECT_EQ(r.consumed, req.size());
  EXPECT_EQ(p.body().view(), "hello, world");
}

TEST(RequestParser, ConnectionCloseAndHttp10DisableKeepAlive) {
  struct Case {
    std::string req;
    bool keepAlive;
    bool http10;
  } cases[] = {
      {"GET /healthz HTTP/1.1\r\n\r\n", true, false},
      {"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", false, false},
      {"GET /healthz HTTP/1.0\r\n\r\n", false, true},
      {"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true, true},
  };
  for (const auto& c : cases) {
    RequestParser p;
    ASSERT_EQ(p.feed(c.req.data(), c.req.size()).status, Status::kComplete) << c.req;
    EXPECT_EQ(p.keepAlive(), c.keepAlive) << c.req;
    EXPECT_EQ(p.http10(), c.http10) << c.req;
  }
}

TEST(RequestParser, HeaderLimit) {
  RequestParser p({.maxHeaderBytes = 256, .maxBodyBytes = 1024});
  std::string req = "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(300, 'a') + "\r\n\r\n";
  auto r = p.feed(req.data(), req.size());
  EXPECT_EQ(r.status, Status::kError);
  EXPECT_EQ(p.error(), ParseError::kHeaderTooLarge);
  // A parser in error stays in error.
  EXPECT_EQ(p.feed("x", 1).status, Status::kError);

  // Many small headers count too, not only one long one.
  RequestParser q({.maxHeaderBytes = 256, .maxBodyBytes = 1024});
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 60; ++i) many += "A: b\r\n";
  many += "\r\n";
  EXPECT_EQ(q.feed(many.data(), many.size()).status, Status::kError);
  EXPECT_EQ(q.error(), ParseError::kHeaderTooLarge);
}

TEST(RequestParser, DeclaredBodyOverLimitFailsBeforeTheBodyArrives) {
  RequestParser p({.maxHeaderBytes = 1024, .maxBodyBytes = 100});
  std::string head = "POST /filter HTTP/1.1\r\nContent-Length: 101\r\n\r\n";
  auto r = p.feed(head.data(), head.size());
  EXPECT_EQ(r.status, Status::kError);
  EXPECT_EQ(p.error(), ParseError::kBodyTooLarge);
}

TEST(RequestParser, ChunkedBodyOverLimit) {
  RequestParser p({.maxHeaderBytes = 1024, .maxBodyBytes = 8});
  std::string req =
      "POST /filter HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n";
  auto r = p.feed(req.data(), req.size());
  EXPECT_EQ(r.status, Status::kError);
  EXPECT_EQ(p.error(), ParseError::kBodyTooLarge);
}

TEST(RequestParser, BodyExactlyAtLimitIsAccepted) {
  RequestParser p({.maxHeaderBytes = 1024, .maxBodyBytes = 4});
  std::string req = post("/filter", "abcd");
  EXPECT_EQ(p.feed(req.data(), req.size()).status, Status::kComplete);
}

TEST(RequestParser, MalformedInput) {
  for (std::string bad :
       {"GARBAGE\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "POST /f HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
        "POST /f HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET / HTTP/1.1\r\nBad Header\r\n\r\n", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"}) {
    RequestParser p;
    EXPECT_EQ(p.feed(bad.data(), bad.size()).status, Status::kError) << bad;
    EXPECT_EQ(p.error(), ParseError::kMalformed) << bad;
    EXPECT_STRNE(p.errorReason(), "");
  }
}

TEST(RequestParser, ExpectContinueReportedOnlyWhenTheClientWaits) {
  std::string req = post("/filter", "{}", "Expect: 100-Continue\r\n");
  size_t headEnd = req.find("\r\n\r\n") + 4;
  RequestParser p;
  auto r = p.feed(req.data(), headEnd);
  EXPECT_EQ(r.status, Status::kExpectContinue);
  EXPECT_EQ(r.consumed, headEnd);
  r = p.feed(req.data() + headEnd, req.size() - headEnd);
  EXPECT_EQ(r.status, Status::kComplete);
  EXPECT_EQ(p.body().view(), "{}");

  RequestParser q;  // body sent along: no interim response needed
  EXPECT_EQ(q.feed(req.data(), req.size()).status, Status::kComplete);
}

TEST(RequestParser, ResetForgetsAPartialRequest) {
  RequestParser p;
  p.feed("POST /filter HTTP/1.1\r\nContent-", 31);
  p.reset();
  EXPECT_EQ(p.phase(), Phase::kIdle);
  std::string req = post("/bind", "x");
  EXPECT_EQ(p.feed(req.data(), req.size()).status, Status::kComplete);
  EXPECT_EQ(p.target(), "/bind");
}

// Property: however a pipelined stream is cut into reads, the same requests come out.
TEST(RequestParser, AnySplitOfAPipelinedStreamYieldsTheSameRequests) {
  std::string stream = post("/filter", R"({"Pod":{"metadata":{"name":"a"}}})") +
                       "GET /healthz HTTP/1.1\r\n\r\n" +
                       "POST /bind HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbind\r\n0\r\n\r\n" +
                       post("/prioritize", "");
  const std::vector<std::pair<std::string, std::string>> want = {
      {"/filter", R"({"Pod":{"metadata":{"name":"a"}}})"},
      {"/healthz", ""},
      {"/bind", "bind"},
      {"/prioritize", ""}};
  std::mt19937 rng(42);
  for (int round = 0; round < 500; ++round) {
    RequestParser p;
    std::vector<std::pair<std::string, std::string>> got;
    size_t off = 0;
    while (off < stream.size()) {
      size_t len = std::min<size_t>(stream.size() - off, 1 + rng() % 40);
      const char* data = stream.data() + off;
      off += len;
      while (len > 0) {
        auto r = p.feed(data, len);
        ASSERT_NE(r.status, Status::kError) << "round " << round;
        data += r.consumed;
        len -= r.consumed;
        if (r.status == Status::kComplete)
          got.emplace_back(std::string(p.target()), std::string(p.body().view()));
      }
    }
    ASSERT_EQ(got, want) << "round " << round;
  }
}

// Reads a stream as Server does: between requests into headRoom(), inside a long
// Content-Length body into bodyRoom(), else into a buffer of its own; each read takes what the
// room holds of what has "arrived" (arrival sizes from rng). Returns each request's target and
// body, checks every body's padding, and adds the body bytes copied to *copied.
std::vector<std::pair<std::string, std::string>> readLikeTheServer(RequestParser& p, const std::string& stream,
                                                                   std::mt19937& rng, size_t maxArrival,
                                                                   uint64_t* copied = nullptr) {
  std::vector<std::pair<std::string, std::string>> got;
  std::string shared(4096, '\0'), carry;
  size_t sent = 0, arrived = 0;
  const uint64_t copiedBefore = p.copiedBodyBytes();
  while (sent < stream.size()) {
    if (arrived == sent) arrived = std::min(stream.size(), sent + 1 + rng() % maxArrival);
    char* at = nullptr;
    size_t room;
    if (p.bodyRemaining() >= 4096) {
      room = p.bodyRoom(p.bodyRemaining(), &at);
    } else if (p.phase() == Phase::kIdle) {
      room = p.headRoom(4096, &at);
    } else {
      at = shared.data();
      room = shared.size();
    }
    size_t len = std::min(room, arrived - sent);
    std::memcpy(at, stream.data() + sent, len);
    sent += len;
    const char* data = at;
    while (len > 0) {
      auto r = p.feed(data, len);
      EXPECT_NE(r.status, Status::kError) << p.errorReason();
      if (r.status == Status::kError) return got;
      data += r.consumed;
      len -= r.consumed;
      if (r.status != Status::kComplete) continue;
      if (p.bodyUnsealed()) {
        carry.assign(data, len);
        data = carry.data();
        p.sealBody();
      }
      EXPECT_FALSE(p.bodyUnsealed());
      const char* end = p.body().data() + p.body().size();
      for (size_t i = 0; i < kBodyPadding; ++i) EXPECT_EQ(end[i], 0) << "padding byte " << i;
      got.emplace_back(std::string(p.target()), std::string(p.body().view()));
    }
  }
  if (copied) *copied += p.copiedBodyBytes() - copiedBefore;
  return got;
}

TEST(RequestParser, ARequestReadWholeIntoItsBodyBufferIsNotCopied) {
  RequestParser p;
  std::mt19937 rng(1);
  const std::string body(100'000, 'n');
  const std::string req = post("/filter", body);
  uint64_t copied = 0;
  // The first request finds a 4 KB room: its body gets a buffer of its own (a copy)...
  ASSERT_EQ(readLikeTheServer(p, req, rng, req.size(), &copied).size(), 1u);
  EXPECT_EQ(copied, 4096 - (req.size() - body.size()));
  // ...sized for that body and a head, so the next ones read whole land in place.
  for (int i = 0; i < 3; ++i) {
    copied = 0;
    auto got = readLikeTheServer(p, req, rng, req.size(), &copied);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].second, body);
    EXPECT_EQ(copied, 0u) << "request " << i + 2;
  }
}

// Property: the same requests come out of a pipelined stream whatever the arrivals, when reads
// go into the body buffer between requests (a request following another in one read is moved
// out before the first body is padded).
TEST(RequestParser, ReadsIntoTheBodyBufferYieldTheSameRequests) {
  const std::string big(9000, 'b');
  std::string stream = post("/filter", R"({"Pod":{"metadata":{"name":"a"}}})") + "GET /healthz HTTP/1.1\r\n\r\n" +
                       post("/filter", big) +
                       "POST /bind HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbind\r\n0\r\n\r\n" +
                       post("/prioritize", "") + post("/filter", big + "c") + post("/prioritize", "[1]");
  const std::vector<std::pair<std::string, std::string>> want = {
      {"/filter", R"({"Pod":{"metadata":{"name":"a"}}})"},
      {"/healthz", ""},
      {"/filter", big},
      {"/bind", "bind"},
      {"/prioritize", ""},
      {"/filter", big + "c"},
      {"/prioritize", "[1]"}};
  std::mt19937 rng(11);
  for (int round = 0; round < 400; ++round) {
    RequestParser p;
    const size_t maxArrival = round % 4 == 0 ? stream.size() : 1 + rng() % 12000;
    ASSERT_EQ(readLikeTheServer(p, stream, rng, maxArrival), want) << "round " << round;
  }
}

// A small in-tree fuzzer (run under ASan/UBSan by scripts/test.sh): mutated streams cut at
// random points never overrun, never report more bytes than given, and errors are sticky.
TEST(RequestParser, MutatedStreamsKeepTheInvariants) {
  const std::string seed = post("/filter", R"({"Pod":{}})", "Expect: 100-continue\r\n") +
                           "POST /bind HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbind\r\n0\r\n\r\n" +
                           "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
  const char kAlphabet[] = "\r\n :;0123456789abcdefABCDEF-/\t\x00\x7f\xff";
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    std::string s = seed;
    for (int m = 0, n = 1 + static_cast<int>(rng() % 4); m < n; ++m) {
      size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[at] = kAlphabet[rng() % (sizeof kAlphabet - 1)];
          break;
        case 1:
          s.erase(at, 1 + rng() % 8);
          break;
        default:
          s.insert(at, std::string(1 + rng() % 8, kAlphabet[rng() % (sizeof kAlphabet - 1)]));
      }
      if (s.empty()) s = "x";
    }
    RequestParser p({.maxHeaderBytes = 512, .maxBodyBytes = 64});
    size_t off = 0;
    bool failed = false;
    while (off < s.size()) {
      size_t len = std::min<size_t>(s.size() - off, 1 + rng() % 64);
      auto r = p.feed(s.data() + off, len);
      ASSERT_LE(r.consumed, len);
      if (failed) {
        ASSERT_EQ(r.status, Status::kError);
      }
      if (r.status == Status::kError) {
        failed = true;
        ASSERT_NE(p.error(), ParseError::kNone);
        off += len;
        continue;
      }
      if (r.status == Status::kComplete) {
        ASSERT_LE(p.body().size(), 64u);
      }
      off += r.consumed;
      if (r.consumed == 0 && r.status != Status::kComplete) FAIL() << "no progress in round " << round;
    }
  }
}

}  // namespace
}  // namespace fleetsched::engine
