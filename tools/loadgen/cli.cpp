#include "tools/loadgen/cli.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <memory>

#include "tools/loadgen/loadgen.h"
#include "tools/loadgen/null_extender.h"

namespace fleetsched::tools::loadgen {

CLI::App* addLoadgenCommand(CLI::App& app) {
  auto o = std::make_shared<LoadgenOptions>();
  CLI::App* cmd = app.add_subcommand("loadgen", "Replay kube-scheduler filter+prioritize calls against an extender");
  cmd->add_option("-t,--target", o->target, "Extender HOST:PORT")->capture_default_str();
  cmd->add_option("--url-prefix", o->urlPrefix, "URL prefix (routes are PREFIX/filter, PREFIX/prioritize)");
  // A name (any case) to the enum's number; help shows the names, an error names the choices.
  const CLI::Validator mode(
      [](std::string& value) -> std::string {
        std::string name = value;
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (name == "nodenames") {
          value = std::to_string(static_cast<int>(ArgsMode::kNodeNames));
        } else if (name == "full") {
          value = std::to_string(static_cast<int>(ArgsMode::kFull));
        } else {
          return "\"" + value + "\" is not a mode: nodenames or full";
        }
        return {};
      },
      "", "mode");
  cmd->add_option("-m,--mode", o->mode, "ExtenderArgs mode: nodenames (nodeCacheCapable) or full")
      ->transform(mode)
      ->type_name("nodenames|full")
      ->default_str("nodenames");
  const CLI::Validator order(
      [](std::string& value) -> std::string {
        if (value == "kube-scheduler") {
          value = std::to_string(static_cast<int>(NodeOrder::kKubeScheduler));
        } else if (value == "repeated") {
          value = std::to_string(static_cast<int>(NodeOrder::kRepeated));
        } else {
          return "\"" + value + "\" is not an order: kube-scheduler or repeated";
        }
        return {};
      },
      "", "order");
  cmd->add_option("--order", o->order,
                  "Node order per pod: kube-scheduler (its parallel filter's order, new per pod) or repeated "
                  "(one list in fleet order for every pod)")
      ->transform(order)
      ->type_name("kube-scheduler|repeated")
      ->default_str("kube-scheduler");
  cmd->add_option("--parallelism", o->parallelism, "kube-scheduler order: its parallelism (goroutines)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--percentage-of-nodes-to-score", o->percentageOfNodesToScore,
                  "kube-scheduler order: stop at this share of nodes (0: kube-scheduler's adaptive default)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  cmd->add_option("--corpus", o->corpusDir, "Rebuild the corpus gen-fleet wrote to this folder (reads corpus.json)");
  cmd->add_option("--nodes-file", o->nodesFile,
                  "Build the corpus from this NodeList (kubectl get nodes -o json) and --pods-file's PodList "
                  "instead of the generator")
      ->type_name("FILE");
  cmd->add_option("--pods-file", o->podsFile, "With --nodes-file: the pods sent, in the list's order")
      ->type_name("FILE");
  cmd->add_option("--requests-file", o->requestsFile, "NDJSON file of ExtenderArgs bodies, one per line");
  cmd->add_option("--corpus-nodes", o->corpusNodes, "Without --corpus: fleet size to generate")->capture_default_str();
  cmd->add_option("--corpus-pods", o->corpusPods, "Distinct pods cycled through")->capture_default_str();
  cmd->add_option("-s,--seed", o->seed, "Without --corpus: generator seed")->capture_default_str();
  cmd->add_option("--full-mode-nodes", o->fullModeNodes, "Full mode: nodes per request")->capture_default_str();
  cmd->add_option("--min-node-bytes", o->minNodeBytes, "Without --corpus: smallest node object")->capture_default_str();
  cmd->add_option("--max-node-bytes", o->maxNodeBytes, "Without --corpus: largest node object")->capture_default_str();
  cmd->add_flag("--filter-only", o->filterOnly, "Send filter only, no prioritize");
  cmd->add_flag("--prioritize-all-nodes", o->prioritizeAllNodes,
                "Send prioritize every node filter got (default: only those filter kept, as kube-scheduler does)");
  cmd->add_option("--apiserver-port", o->apiserverPort,
                  "Run a fake kube-apiserver on 127.0.0.1:PORT (0: any free port) serving the corpus fleet's nodes "
                  "(and --churn's pods); start the extender with `serve --kubeconfig FILE --bind` against it. The run "
                  "starts once the target's /readyz answers 200 (-1: no API server)")
      ->capture_default_str();
  cmd->add_option("--kubeconfig-out", o->kubeconfigOut, "With --apiserver-port: write its kubeconfig to this file")
      ->type_name("FILE");
  cmd->add_option("--ready-timeout", o->readyTimeout, "With --apiserver-port: seconds to wait for the target's /readyz")
      ->capture_default_str();
  cmd->add_flag("--churn", o->churn,
                "Per pod as kube-scheduler with a binding extender: create it on the fake API server (UID of its own), "
                "filter, prioritize, bind to the best-scored node; the server's pod watch then shows it bound until "
                "--pod-lifetime ends it (needs --apiserver-port)");
  cmd->add_option("--pod-lifetime", o->podLifetime, "Churn: seconds from a pod's Binding to its deletion")
      ->capture_default_str();
  cmd->add_option("-c,--connections", o->connections, "Keep-alive connections")->capture_default_str();
  cmd->add_option("-d,--depth", o->depth, "Pods in flight per connection (HTTP pipelining when > 1)")
      ->capture_default_str();
  cmd->add_option("-r,--rate", o->rate, "Open loop: pods started per second (0: closed loop)")->capture_default_str();
  cmd->add_option("-D,--duration", o->duration, "Measured seconds")->capture_default_str();
  cmd->add_option("-w,--warmup", o->warmup, "Seconds run before measuring")->capture_default_str();
  cmd->add_option("--max-pods", o->maxPods, "Stop after this many measured pods");
  cmd->add_option("--cpu", o->cpu, "Pin the load generator to this CPU (-1: no pinning)");
  cmd->add_option("--label", o->label, "Name of this run in JSON and plots");
  cmd->add_option("--json", o->jsonOut, "Write results as JSON to this file");
  cmd->add_option("--svg", o->svgOut, "Write a latency percentile plot (SVG) to this file");
  cmd->add_flag("-q,--quiet", o->quiet, "No table on stdout");
  cmd->footer(
      "Examples:\n"
      "  # 10 s closed loop, 4 connections, against a local fleetsched serve\n"
      "  fleetsched loadgen -t 127.0.0.1:8888 -c 4 -D 10\n"
      "  # open loop at 2000 pods/s with full Node objects, results as JSON\n"
      "  fleetsched loadgen --mode full -r 2000 --json run.json\n"
      "  # the old benchmark's order (one list repeated) to compare with kube-scheduler's\n"
      "  fleetsched loadgen --corpus-nodes 5000 --order repeated --filter-only -D 5\n"
      "  # churn: binds charge nodes between pods (two terminals; serve watches loadgen's API server)\n"
      "  fleetsched loadgen --corpus fleet --churn --apiserver-port 18081 --kubeconfig-out fake.kubeconfig -D 10\n"
      "  fleetsched serve --kubeconfig fake.kubeconfig --bind\n"
      "  # a cluster's own nodes and pods (serve loads the same node list)\n"
      "  fleetsched loadgen --nodes-file nodes.json --pods-file pods.json -D 10\n"
      "  # replay the request bodies gen-fleet wrote (sent as written: --order does not apply)\n"
      "  fleetsched loadgen --corpus corpus --requests-file corpus/requests-nodenames.ndjson");
  cmd->callback([o] {
    int rc = runLoadgen(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
  return cmd;
}

CLI::App* addNullExtenderCommand(CLI::App& app) {
  auto o = std::make_shared<NullExtenderOptions>();
  CLI::App* cmd = app.add_subcommand(
      "null-extender", "Answer every extender call with a fixed reply, deciding nothing (benchmark floor)");
  cmd->add_option("address", o->listen, "Address to listen on (port 0: any free port)")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  cmd->add_option("--filter-reply", o->filterReplyFile,
                  "Send this file's bytes as the body of every filter reply (default: no node kept)")
      ->type_name("FILE");
  cmd->add_option("--prioritize-reply", o->prioritizeReplyFile,
                  "Send this file's bytes as the body of every prioritize reply (default: [])")
      ->type_name("FILE");
  cmd->footer(
      "Every request is read in full and answered 200 with the same body: /filter and /prioritize\n"
      "their replies, any other path (e.g. /healthz) []. No scheduling work is done, so a run against\n"
      "it measures the load generator's ceiling, and with replies recorded from fleetsched the\n"
      "transport floor (bench/transport_floor.py).\n"
      "\n"
      "Examples:\n"
      "  # the load generator's ceiling on the default address\n"
      "  fleetsched null-extender\n"
      "  fleetsched loadgen -t 127.0.0.1:18999 -D 10\n"
      "  # fleetsched's recorded replies for every request: the transport floor\n"
      "  fleetsched null-extender 127.0.0.1:18890 --filter-reply filter.json --prioritize-reply prioritize.json");
  cmd->callback([o] {
    if (int rc = runNullExtender(*o); rc != 0) throw CLI::RuntimeError(rc);
  });
  return cmd;
}

}  // namespace fleetsched::tools::loadgen
