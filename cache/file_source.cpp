#include "cache/file_source.h"

#include "codec/decoder.h"

namespace fleetsched::cache {

namespace {

// Reads and decodes one file; the decoded views point into `buffer` and `decoder`.
template <class List>
bool decodeFile(const std::string& path, codec::PaddedBuffer& buffer, codec::Decoder& decoder, List& out,
                bool (codec::Decoder::*decode)(std::string_view, List&), std::string& error) {
  std::string err;
  if (!buffer.loadFile(path, err)) {
    error = path + ": " + err;
    return false;
  }
  if (!(decoder.*decode)(buffer.view(), out)) {
    error = path + ": " + decoder.errorMessage();
    return false;
  }
  return true;
}

}  // namespace

namespace {

bool load(Cache& cache, const std::string& nodesPath, const std::string& podsPath, bool allowEmptyFleet,
          std::string& error, FileLoadStats* stats) {
  // Separate decoders: a decode's views stay valid only until that decoder's next decode.
  codec::PaddedBuffer nodeBytes, podBytes;
  codec::Decoder nodeDecoder(kMaxClusterFileBytes), podDecoder(kMaxClusterFileBytes);
  codec::NodeList nodes;
  codec::PodList pods;
  if (!nodesPath.empty() &&
      !decodeFile(nodesPath, nodeBytes, nodeDecoder, nodes, &codec::Decoder::decodeNodeList, error)) {
    return false;
  }
  if (!podsPath.empty() && !decodeFile(podsPath, podBytes, podDecoder, pods, &codec::Decoder::decodePodList, error)) {
    return false;
  }
  if (!nodesPath.empty() && nodes.items.empty() && !allowEmptyFleet) {
    error = nodesPath + " holds no nodes; keeping the " + std::to_string(cache.stats().nodes) +
            " nodes loaded before (an empty fleet is accepted only with --allow-empty-fleet)";
    return false;
  }
  {
    auto w = cache.write();
    if (!nodesPath.empty()) w.replaceNodes(nodes.items);
    if (!podsPath.empty()) w.replacePods(pods.items);
  }  // published here, once
  if (stats != nullptr) {
    stats->nodes = nodes.items.size();
    stats->pods = pods.items.size();
  }
  return true;
}

}  // namespace

bool loadClusterFiles(Cache& cache, const std::string& nodesPath, const std::string& podsPath, std::string& error,
                      FileLoadStats* stats) {
  return load(cache, nodesPath, podsPath, /*allowEmptyFleet=*/true, error, stats);
}

bool reloadClusterFiles(Cache& cache, const std::string& nodesPath, const std::string& podsPath,
                        bool allowEmptyFleet, std::string& error, FileLoadStats* stats) {
  return load(cache, nodesPath, podsPath, allowEmptyFleet, error, stats);
}

bool loadNodesFile(Cache& cache, const std::string& path, std::string& error, FileLoadStats* stats) {
  return loadClusterFiles(cache, path, "", error, stats);
}

bool loadPodsFile(Cache& cache, const std::string& path, std::string& error, FileLoadStats* stats) {
  return loadClusterFiles(cache, "", path, error, stats);
}

}  // namespace fleetsched::cache
