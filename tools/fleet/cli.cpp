#include "tools/fleet/cli.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "tools/fleet/fleet_gen.h"

namespace fleetsched::tools::fleet {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File openOut(const std::filesystem::path& path) {
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) std::fprintf(stderr, "gen-fleet: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
  return f;
}

bool reportWritten(const GenFleetOptions& o, const std::filesystem::path& path, bool ok) {
  if (!ok) {
    std::fprintf(stderr, "gen-fleet: write failed: %s\n", path.c_str());
    return false;
  }
  if (!o.quiet) {
    std::error_code ec;
    auto bytes = std::filesystem::file_size(path, ec);
    std::fprintf(stderr, "gen-fleet: wrote %s (%.1f MB)\n", path.c_str(), static_cast<double>(bytes) / 1e6);
  }
  return true;
}

}  // namespace

int runGenFleet(const GenFleetOptions& o) {
  namespace fs = std::filesystem;
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  if (ec) {
    std::fprintf(stderr, "gen-fleet: cannot create %s: %s\n", o.outDir.c_str(), ec.message().c_str());
    return 1;
  }
  if (o.minNodeBytes > o.maxNodeBytes) {
    std::fprintf(stderr, "gen-fleet: --min-node-bytes is larger than --max-node-bytes\n");
    return 2;
  }
  const auto style = o.compact ? JsonValue::Style::kSorted : JsonValue::Style::kKubectl;
  const fs::path dir(o.outDir);

  FleetOptions fleetOptions;
  fleetOptions.nodes = o.nodes;
  fleetOptions.seed = o.seed;
  fleetOptions.cpuOnlyFraction = o.cpuOnlyFraction;
  fleetOptions.region = o.region;
  fleetOptions.zones = o.zones;
  fleetOptions.minNodeBytes = o.minNodeBytes;
  fleetOptions.maxNodeBytes = o.maxNodeBytes;
  FleetGenerator fleet(fleetOptions);
  {
    auto path = dir / "nodes.json";
    File f = openOut(path);
    if (!f || !reportWritten(o, path, writeNodeList(f.get(), fleet, style))) return 1;
  }

  PodOptions podOptions;
  podOptions.pods = o.pods;
  podOptions.seed = o.seed;
  PodGenerator pods(podOptions);
  {
    auto path = dir / "pods.json";
    File f = openOut(path);
    if (!f || !reportWritten(o, path, writePodList(f.get(), pods, style))) return 1;
  }

  if (o.boundPods > 0) {
    PodOptions boundOptions = podOptions;
    boundOptions.pods = o.boundPods;
    boundOptions.namePrefix = "bound-";
    PodGenerator bound(boundOptions);
    size_t placed = bound.bindToFleet(fleet);
    auto path = dir / "bound-pods.json";
    File f = openOut(path);
    if (!f || !reportWritten(o, path, writePodList(f.get(), bound, style, /*onlyBound=*/true))) return 1;
    if (!o.quiet) std::fprintf(stderr, "gen-fleet: %zu of %zu bound pods fit the fleet\n", placed, o.boundPods);
  }

  {
    // corpus.json pins the generator options: `loadgen --corpus DIR` rebuilds the same fleet and
    // pods in memory from it instead of reading multi-megabyte bodies.
    std::string manifest = "{";
    manifest += "\"nodes\":" + std::to_string(o.nodes) + ",\"pods\":" + std::to_string(o.pods);
    manifest += ",\"boundPods\":" + std::to_string(o.boundPods) + ",\"seed\":" + std::to_string(o.seed);
    manifest += ",\"cpuOnlyFraction\":" + std::to_string(o.cpuOnlyFraction);
    manifest += ",\"minNodeBytes\":" + std::to_string(o.minNodeBytes);
    manifest += ",\"maxNodeBytes\":" + std::to_string(o.maxNodeBytes) + ",\"region\":";
    appendJsonString(manifest, o.region);
    manifest += ",\"zones\":" + std::to_string(o.zones) + ",\"fullModeNodes\":" + std::to_string(o.fullModeNodes);
    manifest += "}\n";
    auto path = dir / "corpus.json";
    File f = openOut(path);
    if (!f || std::fwrite(manifest.data(), 1, manifest.size(), f.get()) != manifest.size()) return 1;
  }

  if (o.requests > 0 && o.pods > 0) {
    std::vector<std::string> names;
    names.reserve(fleet.size());
    for (const auto& n : fleet.summaries()) names.push_back(n.name);
    const std::string namesTail = nodeNamesArgsTail(names);
    std::vector<std::string> wires;
    const size_t fullNodes = std::min(o.fullModeNodes, fleet.size());
    for (size_t i = 0; i < fullNodes; ++i) wires.push_back(fleet.nodeWire(i));
    const std::string fullTail = fullArgsTail(wires);

    auto writeBodies = [&](const char* file, std::string_view head, const std::string& tail) {
      auto path = dir / file;
      File f = openOut(path);
      if (!f) return false;
      bool ok = true;
      for (size_t r = 0; r < o.requests && ok; ++r) {
        std::string pod = pods.podWire(r % pods.size());
        ok = std::fwrite(head.data(), 1, head.size(), f.get()) == head.size() &&
             std::fwrite(pod.data(), 1, pod.size(), f.get()) == pod.size() &&
             std::fwrite(tail.data(), 1, tail.size(), f.get()) == tail.size() && std::fputc('\n', f.get()) != EOF;
      }
      return reportWritten(o, path, ok && std::fflush(f.get()) == 0);
    };
    if (!writeBodies("requests-nodenames.ndjson", kNodeNamesArgsHead, namesTail)) return 1;
    if (!writeBodies("requests-full.ndjson", kFullArgsHead, fullTail)) return 1;
  }

  if (!o.quiet) {
    std::map<std::string, size_t> byType;
    size_t gpus = 0, spot = 0;
    for (const auto& n : fleet.summaries()) {
      ++byType[n.instanceType];
      gpus += static_cast<size_t>(n.gpuCount);
      spot += n.capacityType == CapacityType::kSpot;
    }
    std::fprintf(stderr, "gen-fleet: %zu nodes (%zu GPUs, %zu spot):", fleet.size(), gpus, spot);
    for (const auto& [type, count] : byType) std::fprintf(stderr, " %s=%zu", type.c_str(), count);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "\ngen-fleet: done in %.2f s\n", secs);
  }
  return 0;
}

CLI::App* addGenFleetCommand(CLI::App& app) {
  auto options = std::make_shared<GenFleetOptions>();
  CLI::App* cmd = app.add_subcommand("gen-fleet", "Generate a deterministic EKS-like GPU fleet and pod corpus");
  cmd->add_option("-o,--out", options->outDir, "Output folder")->capture_default_str();
  cmd->add_option("-n,--nodes", options->nodes, "Number of nodes")->capture_default_str();
  cmd->add_option("-p,--pods", options->pods, "Number of pending pods (pods.json)")->capture_default_str();
  cmd->add_option("--bound-pods", options->boundPods, "Pods placed on the fleet (bound-pods.json)")
      ->capture_default_str();
  cmd->add_option("-s,--seed", options->seed, "Random seed; the same seed gives identical output")
      ->capture_default_str();
  cmd->add_option("--cpu-only-fraction", options->cpuOnlyFraction, "Fraction of CPU-only nodes")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--min-node-bytes", options->minNodeBytes, "Smallest compact node object")->capture_default_str();
  cmd->add_option("--max-node-bytes", options->maxNodeBytes, "Largest compact node object")->capture_default_str();
  cmd->add_option("--region", options->region, "AWS region of the fleet")->capture_default_str();
  cmd->add_option("--zones", options->zones, "Availability zones")->check(CLI::Range(1, 6))->capture_default_str();
  cmd->add_flag("--compact", options->compact, "Write list files compact (default: kubectl's indented form)");
  cmd->add_option("--requests", options->requests,
                  "Also write this many filter bodies per mode (requests-nodenames.ndjson, requests-full.ndjson)")
      ->capture_default_str();
  cmd->add_option("--full-mode-nodes", options->fullModeNodes, "Nodes in each full-mode body")
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", options->quiet, "Print errors only");
  cmd->footer(
      "Examples:\n"
      "  # 1000 nodes and 1000 pending pods into ./corpus\n"
      "  fleetsched gen-fleet\n"
      "  # a 5000-node fleet with 20000 bound pods and 1000 request bodies per mode\n"
      "  fleetsched gen-fleet -o big -n 5000 --bound-pods 20000 --requests 1000\n"
      "  fleetsched gen-fleet -q -o small -n 50 -p 10 --seed 7");
  cmd->callback([options] {
    int rc = runGenFleet(*options);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
  return cmd;
}

}  // namespace fleetsched::tools::fleet
