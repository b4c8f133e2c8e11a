// ClusterState's DRA part (docs/devices.md): the DeviceClass, ResourceClaim and template
// records, the holders of each claim and the re-filing of the pods whose charge they change. The
// rest of ClusterState is in cluster_state.cpp; the invariants are in cluster_state.h.
#include <set>

#include "core/cluster_state.h"

namespace capext {

// --- DRA objects (docs/devices.md) --------------------------------------------------------------

void ClusterState::SetDeviceClassMappings(std::vector<DeviceClassMapping> mappings) {
  ++version_;
  store_.devices().SetMappings(std::move(mappings));
  RefilePods(store_.devices().PodsWithRefs());
}

void ClusterState::UpsertDeviceClass(DeviceClass device_class) {
  ++version_;
  store_.devices().UpsertClass(std::move(device_class));
  RefilePods(store_.devices().PodsWithRefs());
}

void ClusterState::DeleteDeviceClass(std::string_view name) {
  ++version_;
  if (store_.devices().DeleteClass(name)) RefilePods(store_.devices().PodsWithRefs());
}

namespace {

std::vector<std::string> KeysOf(const std::set<std::string, std::less<>>* set) {
  return set == nullptr ? std::vector<std::string>()
                        : std::vector<std::string>(set->begin(), set->end());
}

}  // namespace

void ClusterState::UpsertResourceClaim(ResourceClaim claim) {
  ++version_;
  const std::string key = claim.Key();
  store_.devices().UpsertClaim(std::move(claim));
  RefilePods(KeysOf(store_.devices().PodsOfClaim(key)));
}

void ClusterState::DeleteResourceClaim(std::string_view ns, std::string_view name) {
  ++version_;
  const std::string key = std::string(ns) + "/" + std::string(name);
  if (store_.devices().DeleteClaim(key)) RefilePods(KeysOf(store_.devices().PodsOfClaim(key)));
}

void ClusterState::UpsertResourceClaimTemplate(ResourceClaimTemplate tmpl) {
  ++version_;
  const std::string key = tmpl.Key();
  store_.devices().UpsertTemplate(std::move(tmpl));
  RefilePods(KeysOf(store_.devices().PodsOfTemplate(key)));
}

void ClusterState::DeleteResourceClaimTemplate(std::string_view ns, std::string_view name) {
  ++version_;
  const std::string key = std::string(ns) + "/" + std::string(name);
  if (store_.devices().DeleteTemplate(key))
    RefilePods(KeysOf(store_.devices().PodsOfTemplate(key)));
}

void ClusterState::SettleClaims(const std::vector<std::string>& claims) {
  if (claims.empty()) return;
  DeviceCatalog& devices = store_.devices();
  std::vector<std::string> refile;
  for (const auto& claim : claims) {
    std::vector<std::string> holders;
    for (const auto& key : KeysOf(devices.PodsOfClaim(claim))) {  // sorted
      const NormalizedPod* pod = store_.FindPod(key);
      if (pod != nullptr && HoldsClaims(*pod)) holders.push_back(key);
    }
    if (!devices.SetHolders(claim, std::move(holders))) continue;
    for (const auto& key : KeysOf(devices.PodsOfClaim(claim)))
      refile.push_back(key);
  }
  RefilePods(refile);
}

void ClusterState::RefilePods(const std::vector<std::string>& keys) {
  for (const auto& key : keys) {
    const NormalizedPod* pod = store_.FindPod(key);
    if (pod == nullptr) continue;
    NormalizedPod fresh = store_.normalizer().Normalize(Pod(static_cast<const Pod&>(*pod)));
    const DeviceDemand* a = fresh.device_demand();
    const DeviceDemand* b = pod->device_demand();
    const bool same_demand = (a == nullptr) == (b == nullptr) &&
                             (a == nullptr || (a->charge == b->charge && a->kept == b->kept &&
                                               a->problem == b->problem));
    if (same_demand && fresh.quota_request() == pod->quota_request()) continue;
    // The templates read may change too (a generated claim seen); the claims a pod names never
    // change without the pod (spec.resourceClaims is immutable; UpsertPod settles status changes).
    if (a != nullptr) store_.devices().SetPodRefs(key, a->claims, a->templates);
    FilePod(std::move(fresh));
    // A reservation holds a copy of the request it charges (a hold's copy follows in FilePod).
    Reservation r;
    if (ledger_.RemoveReservation(store_.quota_set(), key, &r)) {
      r.quota_request = store_.FindPod(key)->quota_request();
      if (journal_) journal_->ReservationChanged(r.uid, r.ns, r.node);
      ledger_.AddReservation(store_.quota_set(), std::move(r));
    }
  }
}

}  // namespace capext
