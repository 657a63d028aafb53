// Shared by the web tests: a fixture database built once per test program,
// servers on free loopback ports, an HTTP client, raw requests (for paths a
// client library would normalise), and schema checks.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "fixture_builder.h"
#include "schemas/schema.h"
#include "tests/support/temp_dir.h"
#include "web/server.h"

namespace perfwatch::web::testing {

// A fixture database in its own temp dir.
struct FixtureDb {
  perfwatch::testing::TempDir dir{"perfwatch-web-test"};
  std::filesystem::path path = dir / "fixture.db";
  FixtureInfo info;

  explicit FixtureDb(const FixtureSpec& spec = {}) {
    auto built = build_fixture(path, spec);
    if (!built) throw std::runtime_error(built.error().to_string());
    info = std::move(*built);
  }
};

// A started server and a client for it; stopping and joining is the
// Server's destructor (the guard).
struct Running {
  std::unique_ptr<Server> server;
  std::unique_ptr<httplib::Client> client;

  explicit Running(ServerOptions options) {
    options.port = 0;
    auto started = Server::start(options);
    if (!started) throw std::runtime_error(started.error().to_string());
    server = std::move(*started);
    client = std::make_unique<httplib::Client>("127.0.0.1", server->port());
    client->set_read_timeout(10, 0);
  }
  int port() const { return server->port(); }
};

inline ServerOptions read_only_options(const std::filesystem::path& db) {
  ServerOptions o;
  o.db = db;
  o.read_only = true;
  return o;
}

// The body as JSON; an assertion failure (and null) if it is not JSON.
inline nlohmann::json body_json(const httplib::Result& r) {
  if (!r) {
    ADD_FAILURE() << "no response: " << httplib::to_string(r.error());
    return nullptr;
  }
  auto doc = nlohmann::json::parse(r->body, nullptr, false);
  if (doc.is_discarded()) {
    ADD_FAILURE() << "not JSON (" << r->status << "): " << r->body.substr(0, 300);
    return nullptr;
  }
  return doc;
}

// Validates against schemas/api/<name>.schema.json.
inline ::testing::AssertionResult matches_schema(const nlohmann::json& doc, const std::string& name) {
  auto schema = schemas::Schema::load("api/" + name + ".schema.json");
  if (!schema) return ::testing::AssertionFailure() << schema.error().to_string();
  auto valid = schema->validate(doc, name);
  if (!valid) return ::testing::AssertionFailure() << valid.error().to_string() << "\n" << doc.dump().substr(0, 2000);
  return ::testing::AssertionSuccess();
}

// GET `path` expecting `status` and a document of schema `name`.
inline nlohmann::json get_valid(httplib::Client& client, const std::string& path, int status, const std::string& name) {
  auto r = client.Get(path.c_str());
  if (!r) {
    ADD_FAILURE() << path << ": no response";
    return nullptr;
  }
  EXPECT_EQ(r->status, status) << path << ": " << r->body.substr(0, 500);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json; charset=utf-8") << path;
  auto doc = body_json(r);
  EXPECT_TRUE(matches_schema(doc, name)) << path;
  return doc;
}

// An error reply: the status, the error schema, the code and the field.
inline void expect_error(httplib::Client& client, const std::string& path, int status, const std::string& code,
                         const std::string& field = "") {
  auto doc = get_valid(client, path, status, "error");
  if (doc.is_null()) return;
  EXPECT_EQ(doc["error"]["code"], code) << path;
  if (!field.empty()) {
    EXPECT_EQ(doc["error"].value("field", ""), field) << path;
  }
}

// Whether `text` holds a response's head and its Content-Length of body.
inline bool response_complete(const std::string& text) {
  auto head_end = text.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  std::string head = text.substr(0, head_end);
  for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto at = head.find("\r\ncontent-length:");
  if (at == std::string::npos) return false;
  std::size_t length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
  return text.size() >= head_end + 4 + length;
}

// A raw HTTP/1.1 exchange: `request` is sent as is (the request line is not
// normalised or encoded); returns everything the server wrote until it
// closed the connection.
inline std::string raw_exchange(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::size_t sent = 0;
    while (sent < request.size()) {
      auto n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    // Until the server closes, or one whole response has come (a server
    // may keep the connection open after answering).
    char buf[4096];
    while (!response_complete(out)) {
      auto n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

inline int raw_status(const std::string& response) {
  // "HTTP/1.1 404 Not Found"
  if (response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

inline std::string raw_get(int port, const std::string& target) {
  return raw_exchange(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

}  // namespace perfwatch::web::testing
