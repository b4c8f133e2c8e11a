// DiscoverApis against the double serving either, both or neither ElasticQuota group, and
// resource.k8s.io at one or several versions.
#include "extender/kube/api_discovery.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "tests/support/apiserver_double_process.h"

namespace capext::kube {
namespace api_discovery_test {
namespace {

using testing::ApiServerDouble;

DiscoveredApis Discover(const std::string& groups, const std::string& group_apis = "",
                        const std::string& dra_versions = "") {
  ApiServerDouble::Options options;
  options.group = groups;
  options.group_apis = group_apis;
  options.dra_version = dra_versions;
  ApiServerDouble server(options);
  REQUIRE(server.started());
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(server.Config(), {}, &client).ok());
  DiscoveredApis apis;
  Status status = DiscoverApis(client.get(), &apis);
  INFO(status.message());
  REQUIRE(status.ok());
  return apis;
}

bool Has(const std::vector<std::string>& groups, const std::string& group) {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

TEST_CASE("discovery: scheduling.x-k8s.io is used when served", "[kube]") {
  DiscoveredApis apis = Discover("scheduling.x-k8s.io");
  REQUIRE(apis.elastic_quota);
  CHECK(apis.elastic_quota->ToString() == "scheduling.x-k8s.io/v1alpha1");
  CHECK(apis.elastic_quota->ApiPath() == "/apis/scheduling.x-k8s.io/v1alpha1");
  CHECK(Has(apis.groups, "policy"));
  CHECK(Has(apis.groups, "scheduling.k8s.io"));
}

TEST_CASE("discovery: the legacy scheduling.sigs.k8s.io group is used when alone", "[kube]") {
  DiscoveredApis apis = Discover("scheduling.sigs.k8s.io");
  REQUIRE(apis.elastic_quota);
  CHECK(apis.elastic_quota->group == "scheduling.sigs.k8s.io");
}

TEST_CASE("discovery: with both groups served scheduling.x-k8s.io wins", "[kube]") {
  DiscoveredApis apis = Discover("both");
  REQUIRE(apis.elastic_quota);
  CHECK(apis.elastic_quota->group == "scheduling.x-k8s.io");
  CHECK(Has(apis.groups, "scheduling.sigs.k8s.io"));
}

TEST_CASE("discovery: no ElasticQuota CRD installed", "[kube]") {
  DiscoveredApis apis = Discover("none");
  CHECK(!apis.elastic_quota);
  CHECK(!apis.groups.empty());
}

TEST_CASE("discovery: PodGroup and Workload APIs are found only when served", "[kube]") {
  DiscoveredApis plain = Discover("scheduling.x-k8s.io");
  CHECK(!plain.pod_group);
  CHECK(!plain.workload);  // scheduling.k8s.io serves v1 only

  DiscoveredApis both = Discover("scheduling.x-k8s.io", "podgroups,workloads");
  REQUIRE(both.pod_group);
  CHECK(both.pod_group->ToString() == "scheduling.x-k8s.io/v1alpha1");
  REQUIRE(both.workload);
  CHECK(both.workload->ToString() == "scheduling.k8s.io/v1alpha1");
  CHECK(both.elastic_quota);

  // The PodGroup CRD without the ElasticQuota CRD: groups are read, quotas are not served.
  DiscoveredApis groups_only = Discover("none", "podgroups");
  CHECK(groups_only.pod_group);
  CHECK(!groups_only.elastic_quota);
  CHECK(!groups_only.unusable.empty());
}

TEST_CASE("discovery: the DRA API is the first served of v1, v1beta2, v1beta1", "[kube]") {
  // docs/devices.md#8-api-versions. `served`: the versions GET /apis lists, preferred first.
  const auto [served, read] = GENERATE(table<std::string, std::string>({
      {"v1,v1beta2,v1beta1", "v1"},  // 1.34 and later
      {"v1beta2,v1beta1", "v1beta2"},
      {"v1beta1,v1beta2", "v1beta2"},  // not the server's preference: ours
      {"v1beta2", "v1beta2"},
      {"v1beta1", "v1beta1"},
  }));
  INFO("resource.k8s.io served at " << served);
  DiscoveredApis apis = Discover("scheduling.x-k8s.io", "", served);
  REQUIRE(apis.device_api);
  CHECK(apis.device_api->ToString() == "resource.k8s.io/" + read);
  CHECK(apis.device_api->ApiPath() == "/apis/resource.k8s.io/" + read);
  CHECK(!Discover("scheduling.x-k8s.io").device_api);
}

TEST_CASE("discovery: a failed /apis is an error", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  KubeConfig config = server.Config();
  config.token = BearerTokenSource::Fixed("wrong");
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(config, {}, &client).ok());
  DiscoveredApis apis;
  Status status = DiscoverApis(client.get(), &apis);
  REQUIRE(!status.ok());
  CHECK(status.message().find("401") != std::string::npos);
}

}  // namespace
}  // namespace api_discovery_test
}  // namespace capext::kube
