// Transport over libcurl's multi interface driven by a libuv loop (uv_poll_t per socket, one
// uv_timer_t for curl's timeouts), so list/watch streams and Binding posts share the loop of
// the thread that owns them. TLS, HTTP/1.1 and HTTP/2 framing are libcurl's.
#pragma once

#include <curl/curl.h>
#include <uv.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "apiclient/kube_config.h"
#include "apiclient/transport.h"

namespace fleetsched::apiclient {

class CurlTransport : public Transport {
 public:
  CurlTransport(uv_loop_t* loop, ClusterConfig config);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  Id start(Request req, ResponseHandler handler) override;
  void cancel(Id id) override;

  // refreshCredentials on the transport's configuration; later requests use what it got.
  bool refreshCredentials(int64_t now, bool force, std::string& error) {
    return apiclient::refreshCredentials(config_, now, force, error);
  }
  const ClusterConfig& config() const { return config_; }

  // Stops every exchange and closes the loop handles; call before the loop ends.
  void close();

 private:
  struct Exchange;
  struct Socket;

  static int onCurlSocket(CURL* easy, curl_socket_t fd, int what, void* self, void* socketp);
  static int onCurlTimer(CURLM* multi, long timeoutMs, void* self);
  static void onPoll(uv_poll_t* handle, int status, int events);
  static void onTimer(uv_timer_t* timer);
  static size_t onHeader(char* data, size_t size, size_t n, void* ex);
  static size_t onWrite(char* data, size_t size, size_t n, void* ex);

  void action(curl_socket_t fd, int flags);
  void finishDone();
  void remove(Exchange* ex);

  uv_loop_t* loop_;
  ClusterConfig config_;
  ServerRoute route_;
  curl_slist* connectTo_ = nullptr;  // route_.connectTo for CURLOPT_CONNECT_TO; lives with the transport
  CURLM* multi_ = nullptr;
  uv_timer_t* timer_ = nullptr;
  Id nextId_ = 1;
  int dispatching_ = 0;
  std::unordered_map<Id, std::unique_ptr<Exchange>> exchanges_;
  std::vector<Id> cancelled_;
};

}  // namespace fleetsched::apiclient
