// TestCertificates: a throwaway PKI for tests that speak TLS to the real binary, made with the
// openssl CLI once per process in a temporary directory: a CA, a server certificate for
// 127.0.0.1, a client certificate signed by the CA, and a client certificate of a rogue CA the
// server does not trust. SharedTestCertificates() REQUIREs that openssl succeeded.
#pragma once

#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"

namespace capext::test {

struct TestCertificates {
  capext::testing::TempDir dir;
  std::string ca, server_cert, server_key, client_cert, client_key, rogue_cert, rogue_key;
  std::string failure;  // the openssl command that failed; "" when all succeeded

  TestCertificates() {
    auto path = [&](const char* name) { return dir.path() + "/" + name; };
    ca = path("ca.crt");
    server_cert = path("server.crt");
    server_key = path("server.key");
    client_cert = path("client.crt");
    client_key = path("client.key");
    rogue_cert = path("rogue.crt");
    rogue_key = path("rogue.key");
    const std::string server_ext =
        dir.Write("server.ext", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    const std::string client_ext = dir.Write("client.ext", "extendedKeyUsage=clientAuth\n");
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    const std::string commands[] = {
        "openssl req -x509 -days 2" + key + "-subj /CN=capext-e2e-ca -keyout " + path("ca.key") +
            " -out " + ca,
        "openssl req" + key + "-subj /CN=127.0.0.1 -keyout " + server_key + " -out " +
            path("server.csr"),
        "openssl x509 -req -days 2 -in " + path("server.csr") + " -CA " + ca + " -CAkey " +
            path("ca.key") + " -CAcreateserial -extfile " + server_ext + " -out " + server_cert,
        "openssl req" + key + "-subj /CN=kube-scheduler -keyout " + client_key + " -out " +
            path("client.csr"),
        "openssl x509 -req -days 2 -in " + path("client.csr") + " -CA " + ca + " -CAkey " +
            path("ca.key") + " -CAcreateserial -extfile " + client_ext + " -out " + client_cert,
        // A client certificate from a CA the server does not trust.
        "openssl req -x509 -days 2" + key + "-subj /CN=rogue -keyout " + rogue_key + " -out " +
            rogue_cert,
    };
    for (const auto& command : commands) {
      if (std::system((command + " >" + path("openssl.log") + " 2>&1").c_str()) != 0) {
        failure = command;
        return;
      }
    }
  }
};

inline const TestCertificates& SharedTestCertificates() {
  static const TestCertificates certificates;
  INFO("openssl failed: " << certificates.failure);
  REQUIRE(certificates.failure.empty());
  return certificates;
}

}  // namespace capext::test
