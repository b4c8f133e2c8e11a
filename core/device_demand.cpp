#include "core/device_demand.h"

#include <algorithm>

#include <fmt/format.h>

namespace capext {
namespace {

// One exactly part or subrequest before allocation (docs/devices.md#3-what-one-request-charges).
std::string ChargeUnallocated(const DeviceCatalog& catalog, const DeviceSubrequest& sub,
                              std::string_view request, std::string_view what, ResourceList* out) {
  const DeviceCatalog::ClassEntry* cls = catalog.FindClass(sub.device_class);
  if (cls == nullptr) {
    return fmt::format("DeviceClass {} not found (request {} of {})", sub.device_class, request,
                       what);
  }
  if (!cls->problem.empty())
    return fmt::format("DeviceClass {}: {}", sub.device_class, cls->problem);
  if (sub.all) {
    if (!cls->all_count) {
      return fmt::format(
          "allocationMode All of request {} before allocation; configure allocationModeAllCount "
          "for DeviceClass {}",
          request, sub.device_class);
    }
    out->AddTo(cls->resource, *cls->all_count);
    return {};
  }
  out->AddTo(cls->resource, sub.count);
  return {};
}

// One allocation result: one unit of the class of the request or subrequest it names.
std::string ChargeResult(const DeviceCatalog& catalog, const ResourceClaim& claim,
                         std::string_view result, std::string_view what, ResourceList* out) {
  const std::size_t slash = result.find('/');
  const std::string_view request = result.substr(0, slash);
  const std::string_view sub =
      slash == std::string_view::npos ? std::string_view() : result.substr(slash + 1);
  auto r = std::find_if(claim.requests.begin(), claim.requests.end(),
                        [&](const DeviceRequest& d) { return d.name == request; });
  const DeviceSubrequest* chosen = nullptr;
  if (r != claim.requests.end()) {
    if (sub.empty() && r->first_available.empty()) {
      chosen = &r->exactly;
    } else {
      for (const auto& s : r->first_available) {
        if (s.name == sub) chosen = &s;
      }
    }
  }
  if (chosen == nullptr) {
    return fmt::format("{} is malformed: allocation result for unknown request {}", what, result);
  }
  const DeviceCatalog::ClassEntry* cls = catalog.FindClass(chosen->device_class);
  if (cls == nullptr) {
    return fmt::format("DeviceClass {} not found (request {} of {})", chosen->device_class, result,
                       what);
  }
  if (!cls->problem.empty()) {
    return fmt::format("DeviceClass {}: {}", chosen->device_class, cls->problem);
  }
  out->AddTo(cls->resource, 1);
  return {};
}

}  // namespace

std::string ClaimCharge(const DeviceCatalog& catalog, const ResourceClaim& claim,
                        std::string_view what, ResourceList* out) {
  if (!claim.malformed.empty()) return fmt::format("{} is malformed: {}", what, claim.malformed);
  ResourceList charge;
  if (claim.allocated) {
    for (const auto& result : claim.results) {
      if (std::string p = ChargeResult(catalog, claim, result, what, &charge); !p.empty()) return p;
    }
  } else {
    for (const auto& request : claim.requests) {
      if (request.first_available.empty()) {
        std::string p = ChargeUnallocated(catalog, request.exactly, request.name, what, &charge);
        if (!p.empty()) return p;
        continue;
      }
      // The allocator picks one alternative: until it has, the largest per resource.
      ResourceList largest;
      for (const auto& sub : request.first_available) {
        ResourceList one;
        std::string p = ChargeUnallocated(catalog, sub,
                                          fmt::format("{}/{}", request.name, sub.name), what, &one);
        if (!p.empty()) return p;
        largest.MaxWith(one);
      }
      charge.Add(largest);
    }
  }
  out->Add(charge);
  return {};
}

DeviceDemand DeviceDemandOf(const DeviceCatalog& catalog, const Pod& pod,
                            std::string_view store_key) {
  DeviceDemand d;
  auto note = [&](std::string problem) {
    if (d.problem.empty()) d.problem = std::move(problem);
  };
  for (const auto& ref : pod.resource_claims) {
    if (ref.no_claim_needed) continue;
    if (ref.claim_name.empty()) {
      // A template whose claim is not generated yet: the claim it will generate, for this pod
      // alone (docs/devices.md#2-which-claims-a-pod-charges).
      if (ref.template_name.empty()) continue;
      std::string key = fmt::format("{}/{}", pod.ns, ref.template_name);
      const ResourceClaimTemplate* tmpl = catalog.FindTemplate(key);
      if (tmpl == nullptr) {
        note(fmt::format("ResourceClaimTemplate {} not found", key));
      } else {
        note(ClaimCharge(catalog, *tmpl, fmt::format("ResourceClaimTemplate {}", key), &d.charge));
      }
      d.templates.push_back(std::move(key));
      continue;
    }
    std::string key = fmt::format("{}/{}", pod.ns, ref.claim_name);
    if (std::find(d.claims.begin(), d.claims.end(), key) != d.claims.end()) continue;  // once
    const ResourceClaim* claim = catalog.FindClaim(key);
    if (claim == nullptr) {
      note(fmt::format("ResourceClaim {} not found", key));
      d.claims.push_back(std::move(key));
      continue;
    }
    ResourceList one;
    note(ClaimCharge(catalog, *claim, fmt::format("ResourceClaim {}", key), &one));
    const DeviceCatalog::Holders* holders = catalog.HoldersOf(key);
    // docs/devices.md#5-a-shared-claim-is-charged-once: the carrier has the devices; nobody else
    // while someone holds the claim.
    if (holders == nullptr || holders->carrier == store_key) {
      d.charge.Add(one);
      if (holders != nullptr && holders->holders.size() > 1) d.kept.Add(one);
    }
    d.claims.push_back(std::move(key));
  }
  return d;
}

}  // namespace capext
