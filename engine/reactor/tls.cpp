#include "engine/reactor/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fleetsched::engine {
namespace {

// An encrypted key would make OpenSSL prompt on the terminal: refuse it instead.
int noPassphrase(char*, int, int, void*) { return 0; }

// The oldest queued OpenSSL error as text, and the queue emptied.
std::string takeError(std::string_view fallback) {
  unsigned long e = ERR_peek_last_error();
  std::string out;
  if (e != 0) {
    const char* reason = ERR_reason_error_string(e);
    out = reason != nullptr ? reason : "error " + std::to_string(e);
  } else {
    out = fallback;
  }
  ERR_clear_error();
  return out;
}

bool readFile(const std::string& path, std::string_view what, std::string& out, std::string& error) {
  errno = 0;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = std::string(what) + " " + path + ": cannot read: " + (errno != 0 ? std::strerror(errno) : "open failed");
    return false;
  }
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (f.bad()) {
    error = std::string(what) + " " + path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  return true;
}

// Every certificate in a PEM text, in order; empty when there is none (error says why).
std::vector<X509*> readCerts(std::string_view pem, std::string& error) {
  std::vector<X509*> certs;
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) {
    error = "out of memory";
    return certs;
  }
  while (X509* x = PEM_read_bio_X509(bio, nullptr, &noPassphrase, nullptr)) certs.push_back(x);
  // The loop ends on "no start line" after the last certificate; any other error is real.
  unsigned long e = ERR_peek_last_error();
  if (!certs.empty() && e != 0 && ERR_GET_REASON(e) != PEM_R_NO_START_LINE) {
    error = takeError("malformed PEM");
    for (X509* x : certs) X509_free(x);
    certs.clear();
  } else if (certs.empty()) {
    error = "no PEM certificate in it";
    if (e != 0 && ERR_GET_REASON(e) != PEM_R_NO_START_LINE) error += " (" + takeError("") + ")";
  }
  ERR_clear_error();
  BIO_free(bio);
  return certs;
}

}  // namespace

std::shared_ptr<TlsContext> TlsContext::load(const TlsFiles& files, std::string& error) {
  TlsPem pem;
  return readFiles(files, pem, error) ? fromFiles(files, pem, error) : nullptr;
}

bool TlsContext::readFiles(const TlsFiles& files, TlsPem& out, std::string& error) {
  if (files.certFile.empty() != files.keyFile.empty()) {
    error = "a server certificate needs both its certificate file and its private key file";
    return false;
  }
  if (files.certFile.empty()) {
    error = "no server certificate given";
    return false;
  }
  out = {};
  if (!readFile(files.certFile, "certificate file", out.cert, error) ||
      !readFile(files.keyFile, "private key file", out.key, error) ||
      (!files.clientCaFile.empty() && !readFile(files.clientCaFile, "client CA file", out.clientCa, error))) {
    return false;
  }
  if (!files.clientCaFile.empty() && out.clientCa.empty()) {
    error = "client CA file " + files.clientCaFile + ": empty";
    return false;
  }
  return true;
}

std::shared_ptr<TlsContext> TlsContext::fromFiles(const TlsFiles& files, const TlsPem& pem, std::string& error) {
  std::string detail;
  std::shared_ptr<TlsContext> ctx = fromPem(pem.cert, pem.key, pem.clientCa, detail);
  if (!ctx) {
    // fromPem names the part ("certificate", "private key", "client CA"); add the file.
    if (detail.starts_with("certificate")) {
      error = "certificate file " + files.certFile + detail.substr(std::strlen("certificate"));
    } else if (detail.starts_with("private key")) {
      error = "private key file " + files.keyFile + detail.substr(std::strlen("private key"));
    } else if (detail.starts_with("client CA")) {
      error = "client CA file " + files.clientCaFile + detail.substr(std::strlen("client CA"));
    } else if (detail.starts_with("key does not match")) {
      error = "private key file " + files.keyFile + " does not match certificate file " + files.certFile + detail.substr(std::strlen("key does not match the certificate"));
    } else {
      error = detail;
    }
  }
  return ctx;
}

std::shared_ptr<TlsContext> TlsContext::fromPem(std::string_view certPem, std::string_view keyPem,
                                                std::string_view clientCaPem, std::string& error) {
  ERR_clear_error();
  std::shared_ptr<TlsContext> self(new TlsContext);
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    error = "cannot create a TLS context: " + takeError("out of memory");
    return nullptr;
  }
  self->ctx_ = ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // No renegotiation (a client could otherwise make us redo a handshake mid-connection), no
  // compression; no session resumption: no tickets, no cache, so every connection is one full
  // handshake with its own client certificate check.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET |
                               SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  static constexpr unsigned char kSessionContext[] = "fleetsched";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  // Idle connections give their 16 KiB record buffers back.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);

  std::vector<X509*> chain = readCerts(certPem, error);
  if (chain.empty()) {
    error = "certificate: " + error;
    return nullptr;
  }
  const bool used = SSL_CTX_use_certificate(ctx, chain[0]) == 1;
  std::tm notAfter{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(chain[0]), &notAfter) == 1) self->notAfter_ = timegm(&notAfter);
  X509_free(chain[0]);
  bool chained = used;
  for (size_t i = 1; i < chain.size(); ++i) {
    // add0 takes the reference on success; free it ourselves otherwise.
    if (!chained || SSL_CTX_add0_chain_cert(ctx, chain[i]) != 1) {
      chained = false;
      X509_free(chain[i]);
    }
  }
  if (!chained) {
    error = "certificate: " + takeError("not usable");
    return nullptr;
  }

  BIO* keyBio = BIO_new_mem_buf(keyPem.data(), static_cast<int>(keyPem.size()));
  EVP_PKEY* key = keyBio != nullptr ? PEM_read_bio_PrivateKey(keyBio, nullptr, &noPassphrase, nullptr) : nullptr;
  BIO_free(keyBio);
  if (key == nullptr) {
    error = "private key: no usable PEM private key in it (" + takeError("none found") + ")";
    return nullptr;
  }
  const bool keyUsed = SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  if (!keyUsed) {
    error = "key does not match the certificate (" + takeError("rejected") + ")";
    return nullptr;
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    error = "key does not match the certificate (" + takeError("mismatch") + ")";
    return nullptr;
  }

  if (!clientCaPem.empty()) {
    std::vector<X509*> cas = readCerts(clientCaPem, error);
    if (cas.empty()) {
      error = "client CA: " + error;
      return nullptr;
    }
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    bool added = true;
    for (X509* ca : cas) {
      // The store and the CA name list each take their own reference.
      added = added && X509_STORE_add_cert(store, ca) == 1 && SSL_CTX_add_client_CA(ctx, ca) == 1;
      X509_free(ca);
    }
    if (!added) {
      error = "client CA: " + takeError("not usable");
      return nullptr;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    self->verifiesClients_ = true;
  }
  ERR_clear_error();
  return self;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

TlsSession::TlsSession(const TlsContext& ctx) : verifiesClients_(ctx.verifiesClients()) {
  ssl_ = SSL_new(ctx.native());
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  if (ssl_ == nullptr || in_ == nullptr || out_ == nullptr) {
    BIO_free(in_);
    BIO_free(out_);
    SSL_free(ssl_);
    ssl_ = nullptr;
    ERR_clear_error();
    return;
  }
  // An empty read BIO means "wait for more", never end of input.
  BIO_set_mem_eof_return(in_, -1);
  BIO_set_mem_eof_return(out_, -1);
  SSL_set_bio(ssl_, in_, out_);  // ssl_ owns both now
  SSL_set_accept_state(ssl_);
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

void TlsSession::receive(const char* data, size_t len) {
  if (ssl_ == nullptr || failed_) return;
  while (len > 0) {
    const int chunk = static_cast<int>(std::min<size_t>(len, 1u << 30));
    const int n = BIO_write(in_, data, chunk);
    if (n <= 0) {
      failed_ = true;
      error_ = "out of memory buffering TLS input";
      return;
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
}

ssize_t TlsSession::read(char* out, size_t cap) {
  if (ssl_ == nullptr || failed_) return kFailed;
  ERR_clear_error();
  const int n = SSL_read(ssl_, out, static_cast<int>(std::min<size_t>(cap, 1u << 30)));
  // A failure takes OpenSSL out of its finished state: remember the handshake was done.
  if (!established_) established_ = SSL_is_init_finished(ssl_) == 1;
  if (n > 0) return n;
  switch (SSL_get_error(ssl_, n)) {
    case SSL_ERROR_WANT_READ:
      return kNeedMore;
    case SSL_ERROR_ZERO_RETURN:
      return kClosed;
    default:
      return fail();
  }
}

ssize_t TlsSession::fail() {
  failed_ = true;
  const unsigned long e = ERR_peek_error();
  const int reason = ERR_GET_REASON(e);
  plainHttp_ = ERR_GET_LIB(e) == ERR_LIB_SSL && (reason == SSL_R_HTTP_REQUEST || reason == SSL_R_HTTPS_PROXY_REQUEST);
  error_ = takeError("TLS failure");
  if (verifiesClients_ && !established() && SSL_get_verify_result(ssl_) != X509_V_OK) {
    error_ += std::string(": client certificate: ") + X509_verify_cert_error_string(SSL_get_verify_result(ssl_));
  }
  return kFailed;
}

bool TlsSession::write(const char* data, size_t len) {
  if (ssl_ == nullptr || failed_) return false;
  while (len > 0) {
    ERR_clear_error();
    const int n = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(len, 1u << 30)));
    if (n <= 0) {
      fail();
      return false;
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

void TlsSession::closeNotify() {
  if (ssl_ == nullptr || failed_ || closeSent_ || !established()) return;
  closeSent_ = true;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // writes close_notify into the output; we do not wait for the client's
  ERR_clear_error();
}

std::string_view TlsSession::pendingOutput() const {
  if (out_ == nullptr) return {};
  char* data = nullptr;
  const long n = BIO_get_mem_data(out_, &data);
  return n > 0 ? std::string_view(data, static_cast<size_t>(n)) : std::string_view();
}

void TlsSession::discardOutput() {
  if (out_ != nullptr) (void)BIO_reset(out_);
}

bool TlsSession::established() const {
  return established_ || (ssl_ != nullptr && SSL_is_init_finished(ssl_) == 1);
}

bool TlsSession::peerVerified() const {
  return verifiesClients_ && !failed_ && established() && SSL_get0_peer_certificate(ssl_) != nullptr &&
         SSL_get_verify_result(ssl_) == X509_V_OK;
}

}  // namespace fleetsched::engine
