// The informers of live mode: which resources it mirrors and how each informer is named and
// addressed (extender/live/live_informers.h runs them).
#pragma once

#include <string>
#include <vector>

#include "extender/kube/api_discovery.h"
#include "extender/kube/informer.h"

namespace capext::kube {

// The resources live mode mirrors: pods, nodes, priorityclasses, poddisruptionbudgets and one
// elasticquotas informer per ElasticQuota group served (sink resource names are these plurals;
// see ElasticQuotaResource). `base` supplies the tuning (timeouts, backoff, resync); its resource
// and path are replaced.
std::vector<InformerOptions> LiveModeInformers(const DiscoveredApis& apis,
                                               const InformerOptions& base = {});
// The informer of one ElasticQuota group/version.
InformerOptions ElasticQuotaInformer(const GroupVersion& gv, const InformerOptions& base = {});
// The sink resource name of a group's ElasticQuotas: "elasticquotas" for scheduling.x-k8s.io,
// "elasticquotas.<group>" for any other group.
std::string ElasticQuotaResource(const std::string& group);

}  // namespace capext::kube
