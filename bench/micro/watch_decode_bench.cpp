// Watch-event decoding: the DOM path live mode used (the envelope's object copied into a
// std::string, rapidjson::Document::Parse, DecodeKubeObject) against the streaming decoder
// (DecodePodJson straight from the envelope's view, walking the tokens ParseWatchEvent recorded).
// Both start from the same watch line and run ParseWatchEvent first. (The DOM path's numbers are
// with today's ParseWatchEvent, which records its tokens; before, its envelope parse was a plain
// SAX pass of about the same cost.) Prints events/s and heap allocations per event (operator new
// counted), and checks that both produce the same Pod.
//
// Usage: bench_watch_decode_bench [--events N] [--only sax|dom]
#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "config/json_pull_reader.h"
#include "config/object_codec.h"
#include "config/object_stream_decoder.h"
#include "extender/kube/api_envelopes.h"

namespace {

std::atomic<uint64_t> g_allocations{0};

}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace capext::bench {
namespace {

// A pod as a 1.26 API server sends it in a watch event (shape of capture 23: managedFields,
// projected service-account volume, default tolerations), with a few more labels and a
// scheduled status, about 3 KiB.
std::string WatchLine(int i) {
  const std::string n = std::to_string(i);
  return R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"job-)" +
         n + R"(","namespace":"quota-a","uid":"c58de13b-1cfa-482f-a0ac-)" +
         std::to_string(100000000000 + i) + R"(","resourceVersion":")" + std::to_string(1000 + i) +
         R"(","creationTimestamp":"2026-11-21T22:17:36Z","labels":{"app":"demo","team":"a","batch.kubernetes.io/job-name":"job-)" +
         n +
         R"("},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"},"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-21T22:17:36Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:team":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}},{"manager":"kube-scheduler","operation":"Update","apiVersion":"v1","time":"2026-11-21T22:17:37Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}}}},"subresource":"status"}]},"spec":{"volumes":[{"name":"kube-api-access-6tbgc","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],"containers":[{"name":"c","image":"registry.k8s.io/pause:3.9","resources":{"requests":{"cpu":"100m","memory":"64Mi"}},"volumeMounts":[{"name":"kube-api-access-6tbgc","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Never","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default","nodeName":"n1","securityContext":{},"schedulerName":"capacity-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-21T22:17:37Z"}],"hostIP":"10.0.0.1","podIP":"10.1.0.5","startTime":"2026-11-21T22:17:37Z","qosClass":"Burstable"}}})";
}

struct Result {
  double events_per_second = 0;
  double allocations_per_event = 0;
  uint64_t checksum = 0;
};

template <class Decode>
Result Run(const std::vector<std::string>& lines, int events, Decode&& decode) {
  for (int i = 0; i < 1000; ++i)
    decode(lines[static_cast<size_t>(i) % lines.size()]);  // warm-up: tape and buffers grow
  Result r;
  const uint64_t allocations = g_allocations.load();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < events; ++i)
    r.checksum += decode(lines[static_cast<size_t>(i) % lines.size()]);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.events_per_second = events / seconds;
  r.allocations_per_event = static_cast<double>(g_allocations.load() - allocations) / events;
  return r;
}

int Main(int argc, char** argv) {
  int events = 200000;
  std::string only;  // "sax" or "dom": run that one alone (for a profiler)
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--events") events = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--only") only = argv[i + 1];
  }
  std::vector<std::string> lines;
  for (int i = 0; i < 64; ++i)
    lines.push_back(WatchLine(i));
  DecodeOptions options;

  auto dom = [&](const std::string& line) -> uint64_t {
    kube::WatchEventEnvelope event;
    if (!kube::ParseWatchEvent(line, &event).ok()) std::abort();
    json::JsonPullReader::ForgetSource();
    std::string object(event.object);  // what the informer handed to the sink
    rapidjson::Document doc;
    doc.Parse(object.data(), object.size());
    KubeObject decoded;
    bool skipped = false;
    std::string kind;
    if (!DecodeKubeObject(doc, options, "Pod", &decoded, &skipped, &kind).ok()) std::abort();
    return static_cast<uint64_t>(std::get<Pod>(decoded).requests.Get("cpu"));
  };
  auto sax = [&](const std::string& line) -> uint64_t {
    kube::WatchEventEnvelope event;
    if (!kube::ParseWatchEvent(line, &event).ok()) std::abort();
    Pod pod;
    std::string kind;
    if (!DecodePodJson(event.object, options, &pod, &kind).ok()) std::abort();
    json::JsonPullReader::ForgetSource();  // as the informer does once the line is handled
    return static_cast<uint64_t>(pod.requests.Get("cpu"));
  };
  auto envelope = [&](const std::string& line) -> uint64_t {
    kube::WatchEventEnvelope event;
    if (!kube::ParseWatchEvent(line, &event).ok()) std::abort();
    json::JsonPullReader::ForgetSource();
    return event.object.size();
  };

  if (only == "sax" || only == "dom") {
    Result r = only == "sax" ? Run(lines, events, sax) : Run(lines, events, dom);
    std::printf("%s: %.0f events/s, %.1f allocations/event\n", only.c_str(), r.events_per_second,
                r.allocations_per_event);
    return 0;
  }
  Result e = Run(lines, events, envelope);
  Result d = Run(lines, events, dom);
  Result s = Run(lines, events, sax);
  if (d.checksum != s.checksum) {
    std::fprintf(stderr, "the two decoders disagree\n");
    return 1;
  }
  std::printf("watch event of %zu bytes (pod with managedFields), %d events each\n",
              lines[0].size(), events);
  std::printf("  envelope only (ParseWatchEvent):   %10.0f events/s  %5.1f allocations/event\n",
              e.events_per_second, e.allocations_per_event);
  std::printf("  DOM (copy + Parse + DecodeKubeObject): %7.0f events/s  %5.1f allocations/event\n",
              d.events_per_second, d.allocations_per_event);
  std::printf("  SAX (DecodePodJson from the view):  %9.0f events/s  %5.1f allocations/event\n",
              s.events_per_second, s.allocations_per_event);
  std::printf("  speed-up %.2fx, allocations %.1f -> %.1f per event\n",
              s.events_per_second / d.events_per_second, d.allocations_per_event,
              s.allocations_per_event);
  return 0;
}

}  // namespace
}  // namespace capext::bench

int main(int argc, char** argv) {
  return capext::bench::Main(argc, argv);
}
