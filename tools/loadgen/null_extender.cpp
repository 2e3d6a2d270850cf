#include "tools/loadgen/null_extender.h"

#include <arpa/inet.h>
#include <llhttp.h>
#include <uv.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace fleetsched::tools::loadgen {

namespace {

std::string httpReply(std::string_view body) {
  std::string r = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ";
  r += std::to_string(body.size());
  r += "\r\n\r\n";
  r += body;
  return r;
}

// Whole responses, status line to body; written as they are for every request.
struct Replies {
  std::string filter =
      httpReply(R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})");
  std::string prioritize = httpReply("[]");
  std::string other = httpReply("[]");
};

bool readReply(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return false;
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (body.empty()) return false;
  out = httpReply(body);
  return true;
}

struct Client {
  uv_tcp_t tcp;
  llhttp_t parser;
  const Replies* replies;
  std::string url;
  char buf[256 * 1024];
};

llhttp_settings_t settings;

void onClose(uv_handle_t* h) { delete static_cast<Client*>(h->data); }

int onMessageComplete(llhttp_t* p) {
  auto* c = static_cast<Client*>(p->data);
  const std::string& reply = c->url.ends_with("/filter")       ? c->replies->filter
                             : c->url.ends_with("/prioritize") ? c->replies->prioritize
                                                               : c->replies->other;
  c->url.clear();
  uv_buf_t b = uv_buf_init(const_cast<char*>(reply.data()), static_cast<unsigned>(reply.size()));
  // Write now what the socket takes; queue the rest (the replies live as long as the process).
  int n = uv_try_write(reinterpret_cast<uv_stream_t*>(&c->tcp), &b, 1);
  if (n < 0) n = 0;
  if (static_cast<size_t>(n) < reply.size()) {
    auto* req = new uv_write_t;
    b = uv_buf_init(const_cast<char*>(reply.data()) + n, static_cast<unsigned>(reply.size() - static_cast<size_t>(n)));
    uv_write(req, reinterpret_cast<uv_stream_t*>(&c->tcp), &b, 1, [](uv_write_t* r, int) { delete r; });
  }
  return HPE_OK;
}

}  // namespace

int runNullExtender(const NullExtenderOptions& options) {
  // Lives as long as the loop below, which runs until the process is killed.
  Replies replies;
  auto load = [](const char* flag, const std::string& path, std::string& reply) {
    if (path.empty() || readReply(path, reply)) return true;
    std::fprintf(stderr, "null-extender: %s needs a readable, non-empty file\n", flag);
    return false;
  };
  if (!load("--filter-reply", options.filterReplyFile, replies.filter) ||
      !load("--prioritize-reply", options.prioritizeReplyFile, replies.prioritize)) {
    return 2;
  }
  const std::string& listen = options.listen;
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "null-extender: %s is not HOST:PORT\n", listen.c_str());
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  llhttp_settings_init(&settings);
  settings.on_url = [](llhttp_t* p, const char* at, size_t n) {
    static_cast<Client*>(p->data)->url.append(at, n);
    return 0;
  };
  settings.on_message_complete = onMessageComplete;
  uv_loop_t* loop = uv_default_loop();
  uv_tcp_t server;
  uv_tcp_init(loop, &server);
  server.data = &replies;
  sockaddr_in addr;
  uv_ip4_addr(listen.substr(0, colon).c_str(), std::atoi(listen.c_str() + colon + 1), &addr);
  if (int rc = uv_tcp_bind(&server, reinterpret_cast<const sockaddr*>(&addr), 0); rc != 0) {
    std::fprintf(stderr, "null-extender: bind %s: %s\n", listen.c_str(), uv_strerror(rc));
    return 1;
  }
  int rc = uv_listen(reinterpret_cast<uv_stream_t*>(&server), 128, [](uv_stream_t* s, int status) {
    if (status < 0) return;
    auto* c = new Client;
    c->tcp.data = c;
    c->replies = static_cast<const Replies*>(s->data);
    uv_tcp_init(s->loop, &c->tcp);
    if (uv_accept(s, reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) {
      uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), onClose);
      return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    llhttp_init(&c->parser, HTTP_REQUEST, &settings);
    c->parser.data = c;
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&c->tcp),
        [](uv_handle_t* h, size_t, uv_buf_t* b) {
          auto* cl = static_cast<Client*>(h->data);
          *b = uv_buf_init(cl->buf, sizeof cl->buf);
        },
        [](uv_stream_t* st, ssize_t n, const uv_buf_t* b) {
          auto* cl = static_cast<Client*>(st->data);
          if (n < 0 || llhttp_execute(&cl->parser, b->base, static_cast<size_t>(n)) != HPE_OK) {
            if (n != 0) uv_close(reinterpret_cast<uv_handle_t*>(st), onClose);
          }
        });
  });
  if (rc != 0) {
    std::fprintf(stderr, "null-extender: listen: %s\n", uv_strerror(rc));
    return 1;
  }
  // /healthz is answered like any other path ("[]"), which is all compare.sh's probe needs.
  // The bound port, for port 0.
  sockaddr_in bound{};
  int len = sizeof bound;
  uv_tcp_getsockname(&server, reinterpret_cast<sockaddr*>(&bound), &len);
  std::fprintf(stderr, "null-extender: listening on %s:%d\n", listen.substr(0, colon).c_str(), ntohs(bound.sin_port));
  return uv_run(loop, UV_RUN_DEFAULT);
}

}  // namespace fleetsched::tools::loadgen
