#include "core/quota_semantics.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace capext {

const AdmissionRules QuotaSemantics::kNoRules;

bool Exceeds(int64_t used, int64_t add, int64_t limit) {
  return limit != std::numeric_limits<int64_t>::max() && SaturatingAdd(used, add) > limit;
}

void AppendIfExceeds(ResourceName resource, int64_t used, int64_t add, int64_t limit,
                     std::vector<Excess>* out) {
  if (Exceeds(used, add, limit)) out->push_back({resource, used, add, limit});
}

std::string DescribeExcesses(const std::vector<Excess>& excesses, const ResourceList& request,
                             std::string_view limit_word) {
  std::string out;
  for (const auto& e : excesses) {
    if (!out.empty()) out += "; ";
    const int64_t own = request.Get(e.resource);
    const int64_t nominated = SaturatingSub(e.add, own);
    out += e.resource.str();
    out += " used ";
    out += FormatAmount(e.resource, e.used);
    if (nominated != 0) {
      out += " + nominated ";
      out += FormatAmount(e.resource, nominated);
    }
    out += " + request ";
    out += FormatAmount(e.resource, own);
    out += " > ";
    out += limit_word;
    out += ' ';
    out += FormatAmount(e.resource, e.limit);
  }
  return out;
}

std::string DescribeRequestExcesses(const std::vector<Excess>& excesses,
                                    std::string_view limit_word) {
  std::string out;
  for (const auto& e : excesses) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} request {} > {} {}", e.resource, FormatAmount(e.resource, e.add),
                       limit_word, FormatAmount(e.resource, e.limit));
  }
  return out;
}

bool IsScalarResourceName(std::string_view name) {
  if (name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")) return true;
  if (name.find("kubernetes.io/") != std::string_view::npos) return true;
  // Extended resources: domain-prefixed names outside the kubernetes.io namespace.
  return name.find('/') != std::string_view::npos;
}

void AggregateBuilder::AddQuota(const ElasticQuota& quota, const ResourceList& used) {
  semantics_->AddToTotals(quota, used, &totals_);
}

AggregateTotals AggregateBuilder::Build() && {
  std::sort(totals_.checked.begin(), totals_.checked.end());  // by name
  return std::move(totals_);
}

void ApplyUsageDelta(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& delta,
                     AggregateTotals* totals) {
  for (const auto& [name, amount] : delta.entries()) {
    if (semantics->CountsInTotals(quota, name)) totals->used.AddTo(name, amount);
  }
}

}  // namespace capext
