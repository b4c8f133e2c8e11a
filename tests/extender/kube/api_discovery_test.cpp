// DiscoverApis against the double serving either, both or neither ElasticQuota group.
#include "extender/kube/api_discovery.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "tests/support/apiserver_double_process.h"

namespace capext::kube {
namespace {

using testing::ApiServerDouble;

DiscoveredApis Discover(const std::string& groups) {
  ApiServerDouble::Options options;
  options.group = groups;
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
}  // namespace capext::kube
