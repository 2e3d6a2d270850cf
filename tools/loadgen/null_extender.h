// `fleetsched null-extender`: an HTTP/1.1 server on one libuv loop that reads each request fully
// and answers a constant extender reply. It decides nothing: it is the floor the benchmarks
// measure against. It measures the load generator's own ceiling (any real extender must be
// compared against what the harness can drive at all) and checks the harness end to end without
// a real scheduler.
//
// By default the replies are empty. Given replies recorded from a real extender, it sends those
// bytes for every request instead: pinned to the server's core, that is the transport floor, the
// core time a pod costs in the kernel and the reactor before any scheduling work is done.
#pragma once

#include <string>

namespace fleetsched::tools::loadgen {

struct NullExtenderOptions {
  std::string listen = "127.0.0.1:18999";  // HOST:PORT; port 0 picks a free one
  std::string filterReplyFile;             // body sent for every .../filter (default: no node kept)
  std::string prioritizeReplyFile;         // body sent for every .../prioritize (default: [])
};

// Serves until the process is killed. Prints "null-extender: listening on HOST:PORT" (the bound
// port) to stderr once it accepts connections. Returns 2 when a reply file is unreadable or empty
// or HOST:PORT has no port, 1 when it cannot listen.
int runNullExtender(const NullExtenderOptions& options);

}  // namespace fleetsched::tools::loadgen
