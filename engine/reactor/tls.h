// TLS for the verbs listener, as a transport under the HTTP reactor: OpenSSL over memory BIOs, so
// the reactor keeps its own sockets and libuv does every read and write. No IO here.
//
//   socket bytes ──receive()──▶ read BIO ──SSL_read──▶ read(): plaintext for the HTTP framing
//   response bytes ──write()──▶ SSL_write ──▶ write BIO ──pendingOutput()──▶ the socket
//
// TlsContext holds the server certificate, its key and, optionally, the CA that client
// certificates must chain to (kube-scheduler's extender tlsConfig presents certFile/keyFile as its
// client certificate). TLS 1.2 and 1.3 only, no renegotiation, no session resumption: a
// connection is one full handshake, and with a client CA every handshake must carry a
// certificate that verifies against it, or it fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <sys/types.h>

struct ssl_ctx_st;
struct ssl_st;
struct bio_st;

namespace fleetsched::engine {

// PEM files, as `serve --tls-cert-file --tls-private-key-file --client-ca-file` name them.
struct TlsFiles {
  std::string certFile;      // the server certificate, then any intermediates
  std::string keyFile;       // its private key
  std::string clientCaFile;  // CA certificates for client certificates; empty: none asked for
};

// The bytes of those files, as read at one moment.
struct TlsPem {
  std::string cert, key, clientCa;
  bool operator==(const TlsPem&) const = default;
};

class TlsContext {
 public:
  // Reads and checks the files: nullptr and `error` (naming the file and what is wrong: cannot be
  // read, holds no certificate or key, key does not match the certificate) on failure.
  static std::shared_ptr<TlsContext> load(const TlsFiles& files, std::string& error);
  // load() in two steps, for a caller that compares the bytes before building a context:
  // readFiles fails (false, `error`) only when a file cannot be read or the CA file is empty;
  // fromFiles builds from those bytes and names the files in its errors as load() does.
  static bool readFiles(const TlsFiles& files, TlsPem& out, std::string& error);
  static std::shared_ptr<TlsContext> fromFiles(const TlsFiles& files, const TlsPem& pem, std::string& error);
  // The same from PEM text (clientCaPem empty: no client certificates asked for).
  static std::shared_ptr<TlsContext> fromPem(std::string_view certPem, std::string_view keyPem,
                                             std::string_view clientCaPem, std::string& error);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Every handshake must present a client certificate that chains to the client CA.
  bool verifiesClients() const { return verifiesClients_; }
  ssl_ctx_st* native() const { return ctx_; }
  // The server certificate's notAfter, in seconds since the epoch.
  int64_t notAfterUnix() const { return notAfter_; }

 private:
  TlsContext() = default;
  ssl_ctx_st* ctx_ = nullptr;
  bool verifiesClients_ = false;
  int64_t notAfter_ = 0;
};

// One connection's TLS state (server side).
class TlsSession {
 public:
  // read() results besides a byte count.
  static constexpr ssize_t kNeedMore = 0;  // every complete record is read: wait for the socket
  static constexpr ssize_t kClosed = -1;   // the client sent close_notify: end of its input
  static constexpr ssize_t kFailed = -2;   // handshake or record error: end the connection

  explicit TlsSession(const TlsContext& ctx);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // False when OpenSSL could not allocate the session; nothing else works then.
  bool ok() const { return ssl_ != nullptr; }
  // Ciphertext read from the socket.
  void receive(const char* data, size_t len);
  // Runs the handshake while it is not finished, then decrypts into `out`: a byte count, or
  // kNeedMore, kClosed, kFailed. Call until it returns kNeedMore or less, then send
  // pendingOutput() (handshake messages and alerts are written there too).
  ssize_t read(char* out, size_t cap);
  // Encrypts plaintext into the pending output; false after a failure.
  bool write(const char* data, size_t len);
  // Queues close_notify (once, only on an established session that has not failed).
  void closeNotify();
  // Ciphertext waiting for the socket; discardOutput() once it is taken.
  std::string_view pendingOutput() const;
  void discardOutput();

  // The handshake finished (also when a record failed after it).
  bool established() const;
  // Established with a client certificate that verified against the context's client CA.
  bool peerVerified() const;
  bool failed() const { return failed_; }
  // The failure was a plaintext HTTP request sent to this TLS port.
  bool plainHttp() const { return plainHttp_; }
  // What went wrong (OpenSSL's reason), for logs and tests.
  const std::string& error() const { return error_; }

 private:
  ssize_t fail();

  ssl_st* ssl_ = nullptr;
  bio_st* in_ = nullptr;   // owned by ssl_
  bio_st* out_ = nullptr;  // owned by ssl_
  bool verifiesClients_ = false;
  bool failed_ = false;
  bool plainHttp_ = false;
  bool closeSent_ = false;
  bool established_ = false;  // the handshake finished (kept after a later failure)
  std::string error_;
};

}  // namespace fleetsched::engine
