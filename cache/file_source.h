// Cluster state from files, for clusters without an API server connection (`fleetsched serve
// --nodes FILE --pods FILE`, reloaded on SIGHUP) and for replay and tests.
//
//   nodes file: `kubectl get nodes -o json` (a NodeList or a List of Nodes)
//   pods file:  `kubectl get pods -A -o json`; every pod is read, the cache charges the bound,
//               non-terminal ones (Cache accounting rules)
//
// A load replaces the cache content in one published version: readers see the old state or the
// new one, never a mix. The whole file is decoded before the cache is touched, so an unreadable
// or malformed file returns false with a one-line error and leaves the cache as it was.
// Reservations in flight survive a reload when their node still exists.
//
// Called from the writer's thread (it takes the writer lock for the final replace only).
#pragma once

#include <cstddef>
#include <string>

#include "cache/cache.h"

namespace fleetsched::cache {

struct FileLoadStats {
  size_t nodes = 0;
  size_t pods = 0;
};

// A file may be bigger than one extender request: the decoder's cap for files.
constexpr size_t kMaxClusterFileBytes = size_t{2} << 30;

bool loadNodesFile(Cache& cache, const std::string& path, std::string& error, FileLoadStats* stats = nullptr);
bool loadPodsFile(Cache& cache, const std::string& path, std::string& error, FileLoadStats* stats = nullptr);
// Both files in one version; an empty path leaves that half alone.
bool loadClusterFiles(Cache& cache, const std::string& nodesPath, const std::string& podsPath, std::string& error,
                      FileLoadStats* stats = nullptr);
// What SIGHUP runs: loadClusterFiles, except that a nodes file holding no node is refused (the
// cache keeps its state, `error` says why) unless `allowEmptyFleet`: a truncated or half-written
// file must not wipe the fleet while /readyz stays 200.
bool reloadClusterFiles(Cache& cache, const std::string& nodesPath, const std::string& podsPath,
                        bool allowEmptyFleet, std::string& error, FileLoadStats* stats = nullptr);

}  // namespace fleetsched::cache
