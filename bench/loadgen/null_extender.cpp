// fleetsched-null-extender: an HTTP/1.1 server on one libuv loop that reads each request fully
// and answers a constant extender reply. It measures the load generator's own ceiling (any real
// extender must be compared against what the harness can drive at all) and checks the harness
// end to end without a real scheduler.
//
// By default the replies are empty. Given replies recorded from a real extender, it sends those
// bytes for every request instead: pinned to the server's core, that is the transport floor, the
// core time a pod costs in the kernel and the reactor before any scheduling work is done.
//
//   fleetsched-null-extender [HOST:PORT] [--filter-reply FILE] [--prioritize-reply FILE]
//   (default 127.0.0.1:18999)
#include <arpa/inet.h>
#include <llhttp.h>
#include <uv.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace {

std::string httpReply(std::string_view body) {
  std::string r = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ";
  r += std::to_string(body.size());
  r += "\r\n\r\n";
  r += body;
  return r;
}

// Whole responses, status line to body; written as they are for every request.
std::string filterReply =
    httpReply(R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})");
std::string prioritizeReply = httpReply("[]");
const std::string otherReply = httpReply("[]");

bool readReply(const char* path, std::string& out) {
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
  std::string url;
  char buf[256 * 1024];
};

llhttp_settings_t settings;

void onClose(uv_handle_t* h) { delete static_cast<Client*>(h->data); }

int onMessageComplete(llhttp_t* p) {
  auto* c = static_cast<Client*>(p->data);
  const std::string& reply = c->url.ends_with("/filter")       ? filterReply
                             : c->url.ends_with("/prioritize") ? prioritizeReply
                                                               : otherReply;
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

int main(int argc, char** argv) {
  std::string listen = "127.0.0.1:18999";
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    std::string* reply = a == "--filter-reply" ? &filterReply : a == "--prioritize-reply" ? &prioritizeReply : nullptr;
    if (reply != nullptr) {
      if (i + 1 == argc || !readReply(argv[i + 1], *reply)) {
        std::fprintf(stderr, "null-extender: %s needs a readable, non-empty file\n", argv[i]);
        return 2;
      }
      ++i;
    } else if (!a.starts_with("-")) {
      listen = a;
    } else {
      std::fprintf(stderr, "usage: %s [HOST:PORT] [--filter-reply FILE] [--prioritize-reply FILE]\n", argv[0]);
      return 2;
    }
  }
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "usage: %s [HOST:PORT] [--filter-reply FILE] [--prioritize-reply FILE]\n", argv[0]);
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
