// Test-time PKI through OpenSSL's API: a CA, and leaf certificates it signs (server: localhost and
// 127.0.0.1; client: clientAuth), as PEM text. Nothing private is committed; every run makes its
// own keys (EC P-256: fast to generate).
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace fleetsched::testing {

struct KeyPair {
  std::shared_ptr<EVP_PKEY> key;
  std::shared_ptr<X509> cert;
  std::string certPem;
  std::string keyPem;
};

inline std::string bioText(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  std::string s(data, static_cast<size_t>(n));
  BIO_free(b);
  return s;
}

inline void addExt(X509* x, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, x, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) throw std::runtime_error("extension");
  X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
}

enum class Role { kCa, kServer, kClient };

// A certificate for `cn` signed by `issuer` (itself when null: a self-signed CA).
inline KeyPair makeCert(const std::string& cn, Role role, const KeyPair* issuer = nullptr, long validFromSec = -3600,
                        long validForSec = 86400) {
  static long serial = 1;
  KeyPair kp;
  kp.key.reset(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!kp.key) throw std::runtime_error("keygen");
  X509* x = X509_new();
  kp.cert.reset(x, X509_free);
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
  X509_gmtime_adj(X509_getm_notBefore(x), validFromSec);
  X509_gmtime_adj(X509_getm_notAfter(x), validFromSec + validForSec);
  X509_set_pubkey(x, kp.key.get());
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                             0);
  X509* signerCert = issuer != nullptr ? issuer->cert.get() : x;
  X509_set_issuer_name(x, X509_get_subject_name(signerCert));
  addExt(x, signerCert, NID_subject_key_identifier, "hash");
  switch (role) {
    case Role::kCa:
      addExt(x, signerCert, NID_basic_constraints, "critical,CA:TRUE");
      addExt(x, signerCert, NID_key_usage, "critical,keyCertSign,cRLSign");
      break;
    case Role::kServer:
      addExt(x, signerCert, NID_basic_constraints, "critical,CA:FALSE");
      addExt(x, signerCert, NID_key_usage, "critical,digitalSignature,keyEncipherment");
      addExt(x, signerCert, NID_ext_key_usage, "serverAuth");
      addExt(x, signerCert, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
      break;
    case Role::kClient:
      addExt(x, signerCert, NID_basic_constraints, "critical,CA:FALSE");
      addExt(x, signerCert, NID_key_usage, "critical,digitalSignature,keyEncipherment");
      addExt(x, signerCert, NID_ext_key_usage, "clientAuth");
      break;
  }
  EVP_PKEY* signer = issuer != nullptr ? issuer->key.get() : kp.key.get();
  if (X509_sign(x, signer, EVP_sha256()) == 0) throw std::runtime_error("sign");
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(b, x);
  kp.certPem = bioText(b);
  b = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(b, kp.key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  kp.keyPem = bioText(b);
  return kp;
}

}  // namespace fleetsched::testing
