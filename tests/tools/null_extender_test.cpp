// `fleetsched null-extender` as a process: it must answer every filter and prioritize with the
// reply it was given (recorded replies of a real extender, hundreds of KB, so writes go out in
// parts), or with empty ones by default, and refuse a reply file it cannot read.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

// The fleetsched binary; the null extender is its `null-extender` command.
const char* binary() { return std::getenv("FLEETSCHED_BIN"); }

std::string tempFile(const std::string& name, const std::string& content) {
  std::string path = ::testing::TempDir() + "null_extender_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// Runs `fleetsched null-extender 127.0.0.1:0 ARGS...`; port() is what it bound.
class NullExtender {
 public:
  explicit NullExtender(std::vector<std::string> args) {
    args.insert(args.begin(), {binary(), "null-extender", "127.0.0.1:0"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    EXPECT_EQ(posix_spawn(&pid_, binary(), &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    std::string line;
    char c;
    while (::read(fds[0], &c, 1) == 1 && c != '\n') line.push_back(c);
    size_t colon = line.rfind(':');
    const bool listening = line.find("listening on") != std::string::npos && colon != std::string::npos;
    // An error takes more than one line (the command's help hint): read to the end, or closing
    // the pipe early kills the command with SIGPIPE before it exits.
    if (!listening) {
      while (::read(fds[0], &c, 1) == 1) {
      }
    }
    ::close(fds[0]);
    if (listening)
      port_ = std::atoi(line.c_str() + colon + 1);
    else
      exitStatus_ = waitExit();
  }
  ~NullExtender() {
    if (port_ != 0) {
      ::kill(pid_, SIGTERM);
      waitExit();
    }
  }
  int port() const { return port_; }
  // The exit status when it did not start listening; -1 otherwise.
  int exitStatus() const { return exitStatus_; }

 private:
  int waitExit() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  pid_t pid_ = 0;
  int port_ = 0;
  int exitStatus_ = -1;
};

int connectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// POSTs `body` to `path` on the keep-alive connection fd and returns the response body.
std::string post(int fd, const std::string& path, const std::string& body) {
  std::string req = "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  EXPECT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  std::string in;
  char buf[65536];
  size_t headEnd = std::string::npos, want = 0;
  for (;;) {
    if (headEnd == std::string::npos && (headEnd = in.find("\r\n\r\n")) != std::string::npos) {
      size_t at = in.find("Content-Length: ");
      EXPECT_NE(at, std::string::npos) << in.substr(0, headEnd);
      if (at == std::string::npos) return {};
      want = headEnd + 4 + std::strtoul(in.c_str() + at + 16, nullptr, 10);
    }
    if (headEnd != std::string::npos && in.size() >= want) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      ADD_FAILURE() << "connection closed after " << in.size() << " bytes";
      return {};
    }
    in.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(in.size(), want) << "bytes after the response";
  EXPECT_EQ(in.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  return in.substr(headEnd + 4, want - headEnd - 4);
}

TEST(NullExtender, AnswersTheRecordedRepliesForEveryRequest) {
  ASSERT_NE(binary(), nullptr) << "FLEETSCHED_BIN not set";
  // A reply the size of a 5,000-node filter's: larger than a socket takes in one write.
  std::string filter = R"({"Nodes":null,"NodeNames":[)";
  for (int i = 0; i < 8000; ++i) filter += (i ? ",\"" : "\"") + std::string("ip-10-0-") + std::to_string(i) + ".ec2.internal\"";
  filter += R"(],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})";
  const std::string scores = R"([{"Host":"ip-10-0-0.ec2.internal","Score":7}])";
  NullExtender server({"--filter-reply", tempFile("filter.json", filter), "--prioritize-reply",
                       tempFile("prioritize.json", scores)});
  ASSERT_NE(server.port(), 0) << "did not start, exit status " << server.exitStatus();
  int fd = connectTo(server.port());
  const std::string body = R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a","b"]})";
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(post(fd, "/filter", body), filter);
    EXPECT_EQ(post(fd, "/prioritize", body), scores);
  }
  EXPECT_EQ(post(fd, "/healthz", ""), "[]");
  ::close(fd);
}

TEST(NullExtender, RepliesAreEmptyByDefault) {
  ASSERT_NE(binary(), nullptr) << "FLEETSCHED_BIN not set";
  NullExtender server({});
  ASSERT_NE(server.port(), 0) << "did not start, exit status " << server.exitStatus();
  int fd = connectTo(server.port());
  EXPECT_EQ(post(fd, "/filter", "{}"),
            R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})");
  EXPECT_EQ(post(fd, "/prioritize", "{}"), "[]");
  ::close(fd);
}

TEST(NullExtender, AReplyFileItCannotReadIsAUsageError) {
  ASSERT_NE(binary(), nullptr) << "FLEETSCHED_BIN not set";
  NullExtender missing({"--filter-reply", ::testing::TempDir() + "null_extender_no_such_file.json"});
  EXPECT_EQ(missing.port(), 0);
  EXPECT_EQ(missing.exitStatus(), 2);
  NullExtender empty({"--prioritize-reply", tempFile("empty.json", "")});
  EXPECT_EQ(empty.exitStatus(), 2);
  NullExtender unknown({"--filter-replies", "x"});
  EXPECT_EQ(unknown.exitStatus(), 2);
}

}  // namespace
