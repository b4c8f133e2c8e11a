#include "core/device_catalog.h"

#include <algorithm>

#include <fmt/format.h>

namespace capext {

void DeviceCatalog::SetMappings(std::vector<DeviceClassMapping> mappings) {
  mappings_ = std::move(mappings);
  for (auto& [name, entry] : classes_)
    ResolveClass(&entry);
}

void DeviceCatalog::ResolveClass(ClassEntry* entry) const {
  // docs/devices.md#4-the-quota-resource-of-a-deviceclass: extendedResourceName, else the
  // configured mapping, else deviceclass/<name>.
  const DeviceClass& c = entry->device_class;
  std::string resource = c.extended_resource_name;
  entry->all_count.reset();
  for (const auto& m : mappings_) {
    if (std::find(m.device_classes.begin(), m.device_classes.end(), c.name) ==
        m.device_classes.end()) {
      continue;
    }
    if (resource.empty()) resource = m.resource;
    entry->all_count = m.all_count;
    break;
  }
  if (resource.empty()) resource = "deviceclass/" + c.name;
  entry->problem.clear();
  // Names come from API objects: a full name table makes the class unusable, not the process.
  if (!ResourceName::TryIntern(resource, &entry->resource)) {
    entry->problem = fmt::format("resource name table full, cannot count {}", resource);
  }
}

void DeviceCatalog::UpsertClass(DeviceClass device_class) {
  ClassEntry entry;
  entry.device_class = std::move(device_class);
  ResolveClass(&entry);
  std::string name = entry.device_class.name;
  classes_.insert_or_assign(std::move(name), std::move(entry));
}

bool DeviceCatalog::DeleteClass(std::string_view name) {
  auto it = classes_.find(name);
  if (it == classes_.end()) return false;
  classes_.erase(it);
  return true;
}

const DeviceCatalog::ClassEntry* DeviceCatalog::FindClass(std::string_view name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

void DeviceCatalog::UpsertClaim(ResourceClaim claim) {
  std::string key = claim.Key();
  claims_.insert_or_assign(std::move(key), std::move(claim));
}

bool DeviceCatalog::DeleteClaim(std::string_view key) {
  auto it = claims_.find(key);
  if (it == claims_.end()) return false;
  claims_.erase(it);
  return true;
}

const ResourceClaim* DeviceCatalog::FindClaim(std::string_view key) const {
  auto it = claims_.find(key);
  return it == claims_.end() ? nullptr : &it->second;
}

void DeviceCatalog::UpsertTemplate(ResourceClaimTemplate tmpl) {
  std::string key = tmpl.Key();
  templates_.insert_or_assign(std::move(key), std::move(tmpl));
}

bool DeviceCatalog::DeleteTemplate(std::string_view key) {
  auto it = templates_.find(key);
  if (it == templates_.end()) return false;
  templates_.erase(it);
  return true;
}

const ResourceClaimTemplate* DeviceCatalog::FindTemplate(std::string_view key) const {
  auto it = templates_.find(key);
  return it == templates_.end() ? nullptr : &it->second;
}

namespace {

using KeySet = std::set<std::string, std::less<>>;

void Unindex(std::map<std::string, KeySet, std::less<>>* index, const std::string& key,
             const std::string& pod) {
  auto it = index->find(key);
  if (it == index->end()) return;
  it->second.erase(pod);
  if (it->second.empty()) index->erase(it);
}

}  // namespace

void DeviceCatalog::SetPodRefs(const std::string& pod_key, std::vector<std::string> claims,
                               std::vector<std::string> templates) {
  if (auto it = pod_refs_.find(pod_key); it != pod_refs_.end()) {
    if (it->second.claims == claims && it->second.templates == templates) return;
    for (const auto& c : it->second.claims)
      Unindex(&pods_of_claim_, c, pod_key);
    for (const auto& t : it->second.templates)
      Unindex(&pods_of_template_, t, pod_key);
    pod_refs_.erase(it);
  }
  if (claims.empty() && templates.empty()) return;
  for (const auto& c : claims)
    pods_of_claim_[c].insert(pod_key);
  for (const auto& t : templates)
    pods_of_template_[t].insert(pod_key);
  pod_refs_.emplace(pod_key, PodRefs{std::move(claims), std::move(templates)});
}

const std::vector<std::string>& DeviceCatalog::ClaimsOfPod(std::string_view pod_key) const {
  static const std::vector<std::string> kNone;
  auto it = pod_refs_.find(pod_key);
  return it == pod_refs_.end() ? kNone : it->second.claims;
}

const KeySet* DeviceCatalog::PodsOfClaim(std::string_view key) const {
  auto it = pods_of_claim_.find(key);
  return it == pods_of_claim_.end() ? nullptr : &it->second;
}

const KeySet* DeviceCatalog::PodsOfTemplate(std::string_view key) const {
  auto it = pods_of_template_.find(key);
  return it == pods_of_template_.end() ? nullptr : &it->second;
}

std::vector<std::string> DeviceCatalog::PodsWithRefs() const {
  std::vector<std::string> out;
  out.reserve(pod_refs_.size());
  for (const auto& [key, refs] : pod_refs_)
    out.push_back(key);
  return out;
}

bool DeviceCatalog::SetHolders(const std::string& claim, std::vector<std::string> holders) {
  auto it = holders_.find(claim);
  if (holders.empty()) {
    if (it == holders_.end()) return false;
    holders_.erase(it);
    return true;
  }
  if (it == holders_.end()) it = holders_.emplace(claim, Holders{}).first;
  Holders& h = it->second;
  if (h.holders == holders) return false;
  // The carrier keeps the claim while it holds it
  // (docs/devices.md#5-a-shared-claim-is-charged-once): no re-filing of the others.
  if (std::find(holders.begin(), holders.end(), h.carrier) == holders.end())
    h.carrier = holders.front();
  h.holders = std::move(holders);
  return true;
}

const DeviceCatalog::Holders* DeviceCatalog::HoldersOf(std::string_view claim) const {
  auto it = holders_.find(claim);
  return it == holders_.end() ? nullptr : &it->second;
}

}  // namespace capext
