// Loopback helpers for tests: a listening TCP socket on 127.0.0.1 on a port the kernel picks,
// for the tests' stand-in servers (a fake kube-apiserver, a recording HTTP server, ...), and a
// blocking HTTP/1.1 client for tests that talk to the reactor.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

namespace fleetsched::testing {

// The listening socket, its port in `port`; -1 when any step fails.
inline int listenOnLoopback(uint16_t& port, int backlog = 16) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, backlog) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  port = ntohs(a.sin_port);
  return fd;
}

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// Reads one HTTP/1.1 response from whatever fill() appends to buf (fill returns false when the
// connection closed or timed out) and removes it from buf. The body is Content-Length bytes, or
// everything up to the end of the connection when there is no Content-Length. Status 0 when the
// connection ended before a whole head (or a whole Content-Length body) arrived.
template <class Fill>
HttpResponse readHttpResponse(std::string& buf, Fill fill) {
  HttpResponse r;
  size_t headEnd;
  while ((headEnd = buf.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return r;
  std::string head = buf.substr(0, headEnd);
  r.status = std::atoi(head.c_str() + 9);
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos < head.size()) {
    size_t end = head.find("\r\n", pos + 2);
    std::string line = head.substr(pos + 2, end == std::string::npos ? std::string::npos : end - pos - 2);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[name] = line.substr(colon + 2);
    }
    pos = end;
  }
  const bool toEof = !r.headers.count("content-length");
  size_t len = toEof ? 0 : std::stoul(r.headers["content-length"]);
  if (toEof) {
    while (fill()) {
    }
    len = buf.size() - headEnd - 4;
  } else {
    while (buf.size() < headEnd + 4 + len)
      if (!fill()) return HttpResponse{};
  }
  r.body = buf.substr(headEnd + 4, len);
  buf.erase(0, headEnd + 4 + len);
  return r;
}

// A blocking HTTP/1.1 client for tests of the reactor: it can pipeline, and reads responses
// one by one (readHttpResponse); recv gives up after receiveTimeoutSec.
class HttpClient {
 public:
  explicit HttpClient(uint16_t port, long receiveTimeoutSec = 3) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{receiveTimeoutSec, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~HttpClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  void send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      data.remove_prefix(static_cast<size_t>(n));
    }
  }
  bool readable(int timeoutMs) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, timeoutMs) > 0;
  }
  void shutdownWrite() { ::shutdown(fd_, SHUT_WR); }
  // Closes with a reset (SO_LINGER 0), so the server sees ECONNRESET rather than EOF.
  void reset() {
    linger l{1, 0};
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close();
  }
  void close() {
    ::close(fd_);
    fd_ = -1;
  }
  // Reads one response; status 0 when the connection closed or timed out first.
  HttpResponse next() {
    return readHttpResponse(buf_, [this] { return fill(); });
  }
  // True when the server closes the connection (EOF or reset) with nothing more to read.
  bool closedByPeer() {
    while (fill()) {
    }
    return eof_ && buf_.empty();
  }

 private:
  bool fill() {
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      eof_ = n == 0 || errno == ECONNRESET;
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buf_;
};

}  // namespace fleetsched::testing
