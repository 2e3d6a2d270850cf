// CacheSink: the reflectors' sink into the cache (engine/ingest only).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiclient/reflector.h"
#include "cache/cache.h"
#include "cache/file_source.h"
#include "codec/decoder.h"

namespace fleetsched::engine {

// Decodes one kind's list pages and watch events and applies them to the cache, publishing
// once per list page and once per watch event. A relist deletes what vanished through the
// cache's relist marks: the cache already holds every key, so the sink keeps no table of its
// own (one was ~130 B per pod).
class CacheSink final : public apiclient::ReflectorSink {
 public:
  CacheSink(cache::Cache& cache, codec::ObjectKind kind)
      : cache_(cache), kind_(kind), decoder_(std::make_unique<codec::Decoder>(cache::kMaxClusterFileBytes)) {}

  void beginRelist() override {
    // Not writer(): that would hold the writer lock until the first page arrives.
    auto mark = [this](cache::Cache::Writer& w) {
      if (kind_ == codec::ObjectKind::Node) {
        w.beginNodeRelist();
      } else {
        w.beginPodRelist();
      }
    };
    if (writer_) {
      mark(*writer_);
    } else {
      cache::Cache::Writer w = cache_.write();
      mark(w);
    }
  }

  apiclient::ListPageInfo applyListPage(std::string_view body) override {
    apiclient::ListPageInfo info;
    bool ok = kind_ == codec::ObjectKind::Node ? decoder_->decodeNodeList(body, nodes_) : decoder_->decodePodList(body, pods_);
    if (!ok) {
      info.error = decoder_->errorMessage();
      return info;
    }
    cache::Cache::Writer& w = writer();
    if (kind_ == codec::ObjectKind::Node) {
      for (const codec::Node& n : nodes_.items) w.upsertNode(n);
      info.resourceVersion = std::string(nodes_.resourceVersion);
      info.continueToken = std::string(nodes_.continueToken);
    } else {
      for (const codec::Pod& p : pods_.items) w.upsertPod(p);
      info.resourceVersion = std::string(pods_.resourceVersion);
      info.continueToken = std::string(pods_.continueToken);
    }
    info.ok = true;
    return info;
  }

  void endRelist() override {
    cache::Cache::Writer& w = writer();
    if (kind_ == codec::ObjectKind::Node) {
      w.sweepNodes();
    } else {
      w.sweepPods();
    }
    flush();
    releaseListBuffers();
  }

  void abortRelist() override { releaseListBuffers(); }  // the next beginRelist starts a new mark

  apiclient::WatchEventInfo applyEvent(std::string_view line) override {
    apiclient::WatchEventInfo e;
    if (!decoder_->decodeWatchEvent(line, kind_, event_)) {
      e.type = apiclient::WatchEventInfo::Type::Invalid;
      e.reason = decoder_->errorMessage();
      return e;
    }
    e.resourceVersion = std::string(event_.resourceVersion);
    const bool node = kind_ == codec::ObjectKind::Node;
    std::string_view key = node ? event_.node.name : event_.pod.uid;
    switch (event_.type) {
      case codec::WatchEventType::Added:
      case codec::WatchEventType::Modified:
        if (node) {
          writer().upsertNode(event_.node);
        } else {
          writer().upsertPod(event_.pod);
        }
        e.type = event_.type == codec::WatchEventType::Added ? apiclient::WatchEventInfo::Type::Added
                                                            : apiclient::WatchEventInfo::Type::Modified;
        break;
      case codec::WatchEventType::Deleted:
        if (node) {
          writer().deleteNode(key);
        } else {
          writer().deletePod(key);
          if (onPodsDeleted_) deleted_.emplace_back(key);
        }
        e.type = apiclient::WatchEventInfo::Type::Deleted;
        break;
      case codec::WatchEventType::Bookmark:
        e.type = apiclient::WatchEventInfo::Type::Bookmark;
        e.initialEventsEnd = event_.initialEventsEnd;
        break;
      case codec::WatchEventType::Error:
        e.type = apiclient::WatchEventInfo::Type::Error;
        e.code = event_.status.code;
        e.reason = std::string(event_.status.reason);
        e.message = std::string(event_.status.message);
        break;
    }
    // Publish (and so release the writer lock) after every applied event, not once per network
    // read: the reactor takes the same lock for reservations and their expiry, and the
    // ingestion thread runs at low priority, so a lock held across the decoding of the read's
    // next events could be held while the thread is starved of CPU. An event that changes no
    // accounting (most MODIFIED) publishes nothing.
    writer_.reset();
    return e;
  }

  void flush() override {
    writer_.reset();  // a Writer publishes when it goes away
    if (!deleted_.empty()) {
      onPodsDeleted_(std::move(deleted_));
      deleted_.clear();
    }
  }

  // A pod sink hands `fn` the UIDs of the pods its watch events deleted, once per flush (per
  // network read), on the ingestion thread. Set before the reflector runs.
  void onPodsDeleted(std::function<void(std::vector<std::string>)> fn) { onPodsDeleted_ = std::move(fn); }

 private:
  cache::Cache::Writer& writer() {
    if (!writer_) writer_.emplace(cache_.write());
    return *writer_;
  }
  // A list page is up to pageSize whole objects (500 nodes ≈ 6.5 MB) and the parser keeps
  // several times the largest document it has seen; watch events are one object each. Dropping
  // the list-sized buffers after a list returns ~50 MB for 5,000 nodes + 100,000 pods.
  void releaseListBuffers() {
    decoder_ = std::make_unique<codec::Decoder>(cache::kMaxClusterFileBytes);
    nodes_ = {};
    pods_ = {};
  }
  cache::Cache& cache_;
  codec::ObjectKind kind_;
  std::unique_ptr<codec::Decoder> decoder_;
  codec::NodeList nodes_;
  codec::PodList pods_;
  codec::WatchEvent event_;
  std::optional<cache::Cache::Writer> writer_;
  std::function<void(std::vector<std::string>)> onPodsDeleted_;
  std::vector<std::string> deleted_;  // since the last flush, with onPodsDeleted_
};

}  // namespace fleetsched::engine
