#!/usr/bin/env python3
"""apiserver_double.py -- a TEST DOUBLE of kube-apiserver. It is NOT a real API server.

It imitates, for our tests only, the HTTP/1.1 wire format recorded from a real kube-apiserver 1.26
in tests/fixtures/kube-apiserver/ (see its README): Status error bodies, list paging with
metadata.continue / remainingItemCount, watch streams (one chunk per `{"type":..,"object":..}\\n`
event, BOOKMARK objects, 410 "too old resource version" as an ERROR event inside a 200 stream),
the pods/binding and pods/eviction subresources, and status subresources. It keeps everything in
memory, has no etcd, no admission, no RBAC, no garbage collection, no kubelet and no controllers.

Model (what tests can rely on):
  * resourceVersion is one global counter, bumped by every write (like etcd's revision).
  * Every write is kept in a bounded event history (--history events). A watch or a paged list
    from a resourceVersion older than the history's floor gets 410 Expired, as after an etcd
    compaction / apiserver restart (captures 70, 74, 75, 76). The control endpoint
    /_double/compact moves the floor to the current resourceVersion.
  * Watch without resourceVersion (or "0") first sends a synthetic ADDED per existing object
    (captures 27, 28); watch from rv N replays the history after N, then streams live events.
    A watch from an rv beyond the current one (a double started fresh under an old client) gets
    one ERROR event, 504 Timeout "Too large resource version" (cause ResourceVersionTooLarge), at
    once where kube-apiserver's watch cache first waits 3 s for it.
  * A watch ends at timeoutSeconds with an optional BOOKMARK (allowWatchBookmarks=true) carrying
    the current resourceVersion, then the terminating zero-length chunk; the connection stays open.
    With --bookmark-interval S > 0 (default 0) a watch with allowWatchBookmarks=true also gets a
    BOOKMARK every S seconds. kube-apiserver 1.26 does not do that for a quiet resource: its watch
    cache sends bookmarks (about every minute, and 2 s before the timeout) only once its
    resourceVersion for the resource has moved past what the watch saw; a watch of 5 s on a quiet
    PriorityClass collection of a real 1.26 ended with no bookmark at all.
  * Pod deletion (DELETE or a successful eviction) is immediate: MODIFIED (deletionTimestamp set,
    grace 0) then DELETED, as the recorded deletion of an unbound grace-0 pod (capture 23).
    With /_double/graceful_deletion on, a bound pod is deleted as a kubelet would let it go: it
    stays terminating (deletionTimestamp, deletionGracePeriodSeconds) for that many seconds, then
    DELETED; deleting or evicting a pod already terminating succeeds and changes nothing (1.26
    ignores PDBs for terminating pods).
  * coordination.k8s.io/v1 Leases (create, get, list, watch, update, patch, delete), as leader
    election writes them: an update whose metadata.resourceVersion is stale gets 409 Conflict.
  * Deviation kept on purpose for test setup: a create keeps the status it was given (the real
    apiserver resets a pod's status to Pending). Namespaces need not exist.
  * Strategic merge patch is applied as a JSON merge patch (enough for labels/annotations);
    custom resources reject it with 415 as recorded (capture 16).
  * Eviction refuses with 429 + DisruptionBudget cause only while PDB refusal mode is on and a
    PodDisruptionBudget in the pod's namespace selects the pod and the pod is not Pending /
    Succeeded / Failed (pending pods ignore PDBs in the real apiserver too, capture 39-45).
  * events.k8s.io/v1 Events (create, get, list, watch, patch, update, delete) are validated as
    the real apiserver validates that API (strict create validation: eventTime, type
    Normal|Warning, reportingController a qualified name, reportingInstance/action/reason
    required and <= 128 characters, note <= 1024 bytes, series.count >= 2 with
    lastObservedTime, namespace matching regarding.namespace; on update only series may change:
    422 Invalid with field causes otherwise). No event TTL: /_double/expire_events deletes them.

Usage:
  python3 apiserver_double.py --port 0 --port-file F [--tls-cert C --tls-key K [--client-ca CA]]
      [--token T] [--group scheduling.x-k8s.io|scheduling.sigs.k8s.io|both|none]
      [--group-apis podgroups,workloads] [--drop-scheduling-gates]
      [--history N] [--initial-rv N] [--no-request-log] [--tcp-nodelay] [--verbose]
      [--bookmark-interval S] [--load F [--rv-bump N]] [--unready-ms N]
Listens on 127.0.0.1 only. Writes the chosen port to F (atomically) once listening.
With --drop-scheduling-gates, pod creates lose spec.schedulingGates (a 1.26 API server without the
PodSchedulingReadiness feature gate). POST with ?dryRun=All validates and answers without storing.
--port P with a fixed P (SO_REUSEADDR) lets a test kill one double and start another on the same
port, as an API server restarted under its clients. With --load F the new double starts with
the objects, resourceVersion, uids and ElasticQuota groups a POST /_double/save wrote to F, and
an empty history (so a watch from any earlier resourceVersion gets 410, as from a restarted
kube-apiserver whose watch cache starts at the current revision); --rv-bump N moves the
resourceVersion on by N, as the writes of other clients while it was down would, so that even a
watch from the last resourceVersion saved gets 410. With --unready-ms N, for N ms
after it starts listening, GET /readyz answers 500 and every API request 503
ServiceUnavailable (no Retry-After), as a server still starting.
With --token, every API request must carry "Authorization: Bearer T" (else 401 as capture 58);
with --client-ca, a client certificate signed by that CA also authenticates.
With --no-request-log, API requests are not kept (GET /_double/requests stays empty): for
benchmarks, where the log would grow by every request body. With --tcp-nodelay, accepted
connections set TCP_NODELAY as Go's net/http does (a real kube-apiserver): without it a response
written as headers then body can wait for the client's delayed ACK (~40 ms on Linux loopback).

Control endpoints for tests (no authentication; JSON bodies; all answer JSON):
  POST /_double/drop_watches {"after_events":0,"partial":false}
        close every open watch without the terminating chunk, now (after_events=0) or after each
        watch sent that many more events; partial=true first writes half of the next event.
  POST /_double/compact {}                    history floor := current resourceVersion
  POST /_double/restart {"bump":0}            drop all watches, compact, resourceVersion += bump
  POST /_double/bookmark {}                   send a BOOKMARK now to watches that allow them
  POST /_double/inject_binding_failures {"count":N,"code":500|409}
  POST /_double/pdb_refusal {"enabled":true,"style":"budget"|"processing"}
  POST /_double/token {"token":"T"|null}      change (or, with null, disable) the accepted token
  POST /_double/delay {"ms":N,"count":-1,"path_prefix":"","method":""}   delay matching requests
  POST /_double/graceful_deletion {"seconds":N}   bound pods stay terminating N s when deleted
                                               (0: immediate deletion, the default)
  POST /_double/churn {"resource":"pods","namespace":"ns","prefix":"c-","count":N,
                       "action":"create"|"relabel"|"delete"}   server-side burst of writes
  POST /_double/install_group {"group":"scheduling.sigs.k8s.io"}   serve that ElasticQuota group
        from now on (as when its CRD is installed later); discovery lists it, its objects start empty.
        {"group":"resource.k8s.io","version":"v1"} serves DRA at that version from now on.
  POST /_double/install_group {"group":"podgroups"}   serve coscheduling PodGroups
      (scheduling.x-k8s.io/v1alpha1 podgroups; the group is listed even without ElasticQuotas)
  POST /_double/install_group {"group":"workloads"}   serve upstream Workloads
      (scheduling.k8s.io/v1alpha1 workloads, as Kubernetes 1.35 with GenericWorkload: the group
      lists v1 (preferred) and v1alpha1)
  DRA (--dra-version v1|v1beta2|v1beta1, default none): resource.k8s.io at that version, with
        resourceclaims (+ /status), resourceclaimtemplates and deviceclasses, stored as given (no
        validation, no defaulting, no allocation: tests write status.allocation themselves, as
        kube-scheduler's DRA plugin would). The object shapes are those of the Kubernetes 1.34
        API types (tests/fixtures/dra/). A comma list (v1,v1beta2,v1beta1 as a 1.34 API server)
        serves every version listed, discovery listing them in that order (the first preferred),
        each version with its own objects: no conversion between versions.
  POST /_double/create_many {"resource":"pods","group":"..","items":[{object},..]}
        creates every item as POST on its collection would (namespace from the item's metadata;
        same defaults, uids, events and errors), under one lock: for setting up big clusters.
        Answers {"created":N,"first":RV,"last":RV}; stops at the first invalid item (4xx).
  POST /_double/fail {"count":N,"code":429,"retry_after":S,"mode":"status"|"reset"|"truncate",
                      "path_prefix":"","method":"","watch":null|true|false}
        FAULT INJECTION for the next N API requests that match (method, path prefix, and watch or
        not; null/absent matches both), in the order rules were added; {"clear":true} drops every
        rule. Modes: "status" answers `code` with a Status body (reason from the code: 410
        Expired, 429 TooManyRequests, 500 InternalError, 503 ServiceUnavailable, 504 Timeout) and,
        with retry_after, a Retry-After header and details.retryAfterSeconds, as kube-apiserver's
        429s carry; "reset" closes the connection with a TCP RST before any answer (a connection
        reset); "truncate" answers as usual but cuts the body off halfway and closes the
        connection (a list body cut off mid-stream; for watch streams use drop_watches).
  POST /_double/hang_watches {}               FAULT INJECTION: every open watch goes silent (no
        event, no bookmark, no end at its timeoutSeconds; events wait) but stays open, until the
        client closes it; watches opened later are normal. Answers {"hung":N}.
  POST /_double/save {"path":F}               writes every object, the resourceVersion, the uid
        counter and the ElasticQuota groups to F (for --load in a double started later)
  GET  /_double/requests[?since=SEQ]          request log; POST /_double/requests/clear
        Each entry: seq, method, path, query, content_type, user_agent, body (first 64 KiB),
        status, "at" (Unix seconds when it was answered), and "arrived" / "answered": time.monotonic() (CLOCK_MONOTONIC, the clock of C++'s
        steady_clock on Linux) when its headers had been read and when its answer was written.
  GET  /_double/state                         resourceVersion, history floor, open watches
  GET  /_double/objects?resource=pods[&group=..]   every stored object, sorted by key
  POST /_double/expire_events {}               delete every Event now (as the apiserver's event
                                               TTL would)
"""

import argparse
import base64
import collections
import copy
import datetime
import email.utils
import http.server
import json
import os
import re
import select
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
import uuid

# ---------------------------------------------------------------------------------------------
# Resource descriptors


class Resource:
    """One served resource type: where it lives on the wire and how its objects look."""

    def __init__(self, group, version, plural, kind, namespaced, builtin, bookmark_body,
                 status_subresource=True, has_generation=False):
        self.group = group
        self.version = version
        self.plural = plural
        self.kind = kind
        self.namespaced = namespaced
        self.builtin = builtin  # built-in lists omit kind/apiVersion in items; CRs keep them
        self.bookmark_body = bookmark_body  # fields of an empty object of this kind (Go zero value)
        self.status_subresource = status_subresource
        self.has_generation = has_generation

    @property
    def api_version(self):
        return self.version if not self.group else self.group + "/" + self.version

    @property
    def qualified(self):
        """Name used in Status messages: "pods", "elasticquotas.scheduling.x-k8s.io"."""
        return self.plural if not self.group else self.plural + "." + self.group

    def details(self, name=None):
        d = {}
        if name is not None:
            d["name"] = name
        if self.group:
            d["group"] = self.group
        d["kind"] = self.plural
        return d


DRA_GROUP = "resource.k8s.io"


def dra_resources(version):
    return [
        Resource(DRA_GROUP, version, "resourceclaims", "ResourceClaim", True, True,
                 {"spec": {"devices": {}}, "status": {}}),
        Resource(DRA_GROUP, version, "resourceclaimtemplates", "ResourceClaimTemplate", True,
                 True, {"spec": {"spec": {"devices": {}}}}, status_subresource=False),
        Resource(DRA_GROUP, version, "deviceclasses", "DeviceClass", False, True, {"spec": {}},
                 status_subresource=False, has_generation=True),
    ]


# Pod-group APIs the double serves on request (--group-apis, /_double/install_group).
GROUP_API_RESOURCES = {
    "podgroups": ("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup"),
    "workloads": ("scheduling.k8s.io", "v1alpha1", "workloads", "Workload"),
}


def group_api_resource(name):
    group, version, plural, kind = GROUP_API_RESOURCES[name]
    return Resource(group, version, plural, kind, True, False, None, has_generation=True)


def make_resources(eq_groups, dra_versions=()):
    pod_bookmark = {"spec": {"containers": None}, "status": {}}
    node_bookmark = {
        "spec": {},
        "status": {
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
            "nodeInfo": {k: "" for k in (
                "machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion",
                "operatingSystem", "architecture")},
        },
    }
    resources = [
        Resource("", "v1", "pods", "Pod", True, True, pod_bookmark),
        Resource("", "v1", "nodes", "Node", False, True, node_bookmark),
        Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, True,
                 {"value": 0}, status_subresource=False),
        Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, True,
                 {"spec": {}, "status": {"disruptionsAllowed": 0, "currentHealthy": 0,
                                         "desiredHealthy": 0, "expectedPods": 0}},
                 has_generation=True),
    ]
    resources.append(Resource("coordination.k8s.io", "v1", "leases", "Lease", True, True,
                              {"spec": {}}, status_subresource=False))
    # events.k8s.io/v1 Event: no spec/status; the Go zero value has "eventTime": null.
    resources.append(Resource("events.k8s.io", "v1", "events", "Event", True, True,
                              {"eventTime": None}, status_subresource=False))
    for g in eq_groups:
        resources.append(Resource(g, "v1alpha1", "elasticquotas", "ElasticQuota", True, False,
                                  None, has_generation=True))
    for version in dra_versions:
        resources.extend(dra_resources(version))
    return {(r.group, r.version, r.plural): r for r in resources}


# Groups listed by GET /apis before the ElasticQuota group (capture 06, same order).
BASE_GROUPS = [
    ("apiregistration.k8s.io", ["v1"]), ("apps", ["v1"]), ("events.k8s.io", ["v1"]),
    ("authentication.k8s.io", ["v1"]), ("authorization.k8s.io", ["v1"]),
    ("autoscaling", ["v2", "v1"]), ("batch", ["v1"]), ("certificates.k8s.io", ["v1"]),
    ("networking.k8s.io", ["v1"]), ("policy", ["v1"]), ("rbac.authorization.k8s.io", ["v1"]),
    ("storage.k8s.io", ["v1", "v1beta1"]), ("admissionregistration.k8s.io", ["v1"]),
    ("apiextensions.k8s.io", ["v1"]), ("scheduling.k8s.io", ["v1"]),
    ("coordination.k8s.io", ["v1"]), ("node.k8s.io", ["v1"]), ("discovery.k8s.io", ["v1"]),
    ("flowcontrol.apiserver.k8s.io", ["v1beta3", "v1beta2"]),
]

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
STATUS_VERBS = ["get", "patch", "update"]

# APIResourceList entries per group/version (copied in shape from captures 03 and 07).
CORE_V1_RESOURCES = [
    {"name": "bindings", "singularName": "binding", "namespaced": True, "kind": "Binding",
     "verbs": ["create"]},
    {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node",
     "verbs": ALL_VERBS, "shortNames": ["no"], "storageVersionHash": "XwShjMxG9Fs="},
    {"name": "nodes/status", "singularName": "", "namespaced": False, "kind": "Node",
     "verbs": STATUS_VERBS},
    {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
     "verbs": ALL_VERBS, "shortNames": ["po"], "categories": ["all"],
     "storageVersionHash": "xPOwRZ+Yhw8="},
    {"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
     "verbs": ["create"]},
    {"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
     "version": "v1", "kind": "Eviction", "verbs": ["create"]},
    {"name": "pods/status", "singularName": "", "namespaced": True, "kind": "Pod",
     "verbs": STATUS_VERBS},
]


def group_resources(group, version, group_apis=(), eq_groups=None):
    """APIResourceList entries: the pod-group APIs served in this group/version, then the
    built-in or ElasticQuota resources (an ElasticQuota group only when it is one)."""
    out = []
    for name in group_apis:
        g, v, plural, kind = GROUP_API_RESOURCES[name]
        if (g, v) == (group, version):
            out += [{"name": plural, "singularName": kind.lower(), "namespaced": True,
                     "kind": kind, "verbs": ALL_VERBS},
                    {"name": plural + "/status", "singularName": "", "namespaced": True,
                     "kind": kind, "verbs": STATUS_VERBS}]
    if version == "v1alpha1" and eq_groups is not None and group not in eq_groups:
        return out
    return out + group_resources_base(group, version)


def group_resources_base(group, version):
    if group == "policy" and version == "v1":
        return [
            {"name": "poddisruptionbudgets", "singularName": "poddisruptionbudget",
             "namespaced": True, "kind": "PodDisruptionBudget", "verbs": ALL_VERBS,
             "shortNames": ["pdb"]},
            {"name": "poddisruptionbudgets/status", "singularName": "", "namespaced": True,
             "kind": "PodDisruptionBudget", "verbs": STATUS_VERBS},
        ]
    if group == "scheduling.k8s.io" and version == "v1":
        return [{"name": "priorityclasses", "singularName": "priorityclass",
                 "namespaced": False, "kind": "PriorityClass", "verbs": ALL_VERBS,
                 "shortNames": ["pc"]}]
    if group == "events.k8s.io" and version == "v1":
        return [{"name": "events", "singularName": "event", "namespaced": True, "kind": "Event",
                 "verbs": ALL_VERBS, "shortNames": ["ev"],
                 "storageVersionHash": "r2yiGXH7wu8="}]
    if group == DRA_GROUP:
        return [
            {"name": "deviceclasses", "singularName": "deviceclass", "namespaced": False,
             "kind": "DeviceClass", "verbs": ALL_VERBS},
            {"name": "resourceclaims", "singularName": "resourceclaim", "namespaced": True,
             "kind": "ResourceClaim", "verbs": ALL_VERBS},
            {"name": "resourceclaims/status", "singularName": "", "namespaced": True,
             "kind": "ResourceClaim", "verbs": STATUS_VERBS},
            {"name": "resourceclaimtemplates", "singularName": "resourceclaimtemplate",
             "namespaced": True, "kind": "ResourceClaimTemplate", "verbs": ALL_VERBS},
            {"name": "resourceslices", "singularName": "resourceslice", "namespaced": False,
             "kind": "ResourceSlice", "verbs": ALL_VERBS},
        ]
    if group == "coordination.k8s.io" and version == "v1":
        return [{"name": "leases", "singularName": "lease", "namespaced": True, "kind": "Lease",
                 "verbs": ALL_VERBS, "storageVersionHash": "gqkMMb/YqFM="}]
    if version == "v1alpha1":  # an ElasticQuota group (capture 07)
        return [
            {"name": "elasticquotas", "singularName": "elasticquota", "namespaced": True,
             "kind": "ElasticQuota",
             "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update",
                       "watch"],
             "shortNames": ["eq", "eqs"], "storageVersionHash": "isuSd8Ok2BY="},
            {"name": "elasticquotas/status", "singularName": "", "namespaced": True,
             "kind": "ElasticQuota", "verbs": STATUS_VERBS},
        ]
    return []


# ---------------------------------------------------------------------------------------------
# Small helpers


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def status_body(code, reason, message, details=None, metadata=None, success=False):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": metadata or {},
            "status": "Success" if success else "Failure"}
    if not success:
        body["message"] = message
        body["reason"] = reason
        if details is not None:
            body["details"] = details
    body["code"] = code
    return body


def success_status(code=201):
    return status_body(code, None, None, success=True)


METADATA_ORDER = ["name", "generateName", "namespace", "uid", "resourceVersion", "generation",
                  "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
                  "annotations", "ownerReferences", "finalizers", "managedFields"]


def sorted_deep(value):
    if isinstance(value, dict):
        return {k: sorted_deep(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_deep(v) for v in value]
    return value


def wire_order(obj, builtin):
    """Key order as the apiserver writes it: Go struct field order for built-in types,
    sorted keys at every level for custom resources (Go maps)."""
    if not builtin:
        return sorted_deep(obj)
    meta = obj.get("metadata", {})
    ordered_meta = {k: meta[k] for k in METADATA_ORDER if k in meta}
    ordered_meta.update({k: v for k, v in meta.items() if k not in ordered_meta})
    out = {"kind": obj.get("kind"), "apiVersion": obj.get("apiVersion"), "metadata": ordered_meta}
    out.update({k: v for k, v in obj.items() if k not in out})
    return out


def object_key(namespace, name):
    return name if namespace is None else namespace + "/" + name


def json_merge(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = json_merge(result.get(k), v)
    return result


def json_pointer_parts(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError("invalid JSON pointer " + path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def json_patch(doc, ops):
    """RFC 6902 subset: add, remove, replace, test."""
    doc = copy.deepcopy(doc)
    for op in ops:
        parts = json_pointer_parts(op["path"])
        if not parts:
            raise ValueError("cannot patch the root")
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = parts[-1]
        kind = op["op"]
        if kind in ("add", "replace"):
            if isinstance(parent, list):
                if last == "-":
                    parent.append(op["value"])
                elif kind == "add":
                    parent.insert(int(last), op["value"])
                else:
                    parent[int(last)] = op["value"]
            else:
                if kind == "replace" and last not in parent:
                    raise ValueError("replace of a missing member " + op["path"])
                parent[last] = op["value"]
        elif kind == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                del parent[last]
        elif kind == "test":
            cur = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if cur != op.get("value"):
                raise ValueError("test operation failed for " + op["path"])
        else:
            raise ValueError("unsupported patch operation " + kind)
    return doc


def selector_matches(selector, labels):
    if not selector:
        return False  # policy/v1: an empty selector matches nothing... kept simple for tests
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


NAME_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


class ApiError(Exception):
    """An error answered as a Status object (or plain text for an unknown path)."""

    def __init__(self, code, body, headers=None, text=None):
        super().__init__(code)
        self.code = code
        self.body = body
        self.headers = headers or {}
        self.text = text


def not_found_path():
    return ApiError(404, None, text="404 page not found\n")


def not_found(res, name):
    return ApiError(404, status_body(404, "NotFound", '%s "%s" not found' % (res.qualified, name),
                                     res.details(name)))


def bad_request(message):
    return ApiError(400, status_body(400, "BadRequest", message))


def conflict_modified(res, name):
    return ApiError(409, status_body(
        409, "Conflict",
        'Operation cannot be fulfilled on %s "%s": the object has been modified; please apply '
        "your changes to the latest version and try again" % (res.qualified, name),
        res.details(name)))


QUALIFIED_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
DNS_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def is_qualified_name(value):
    """apimachinery's IsQualifiedName: an optional DNS-subdomain prefix (<= 253) and "/", then a
    name of at most 63 characters (e.g. "kubernetes.io/kubelet", "default-scheduler")."""
    prefix, slash, name = value.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not DNS_SUBDOMAIN_RE.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and QUALIFIED_NAME_RE.fullmatch(name) is not None
MICROTIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})")
EVENT_IMMUTABLE = ("regarding", "related", "reason", "note", "type", "eventTime", "action",
                   "reportingController", "reportingInstance")


def invalid_event(name, causes):
    """422 as the apiserver words it: Event.events.k8s.io "name" is invalid: [field: msg, ..]."""
    parts = ["%s: %s" % (field, msg) for field, _, msg in causes]
    text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return ApiError(422, status_body(
        422, "Invalid", 'Event.events.k8s.io "%s" is invalid: %s' % (name, text),
        {"name": name, "group": "events.k8s.io", "kind": "Event",
         "causes": [{"reason": reason, "message": msg, "field": field}
                    for field, reason, msg in causes]}))


def event_series_causes(event):
    series = event.get("series")
    if series is None:
        return []
    causes = []
    if not isinstance(series.get("count"), int) or series["count"] < 2:
        causes.append(("series.count", "FieldValueInvalid",
                       'Invalid value: "": should be at least 2'))
    if not MICROTIME_RE.fullmatch(str(series.get("lastObservedTime") or "")):
        causes.append(("series.lastObservedTime", "FieldValueRequired", "Required value"))
    return causes


def validate_event_create(event, ns):
    """The strict validation of an events.k8s.io/v1 create (ValidateEventCreate)."""
    causes = []
    name = event["metadata"].get("name", "")
    regarding = event.get("regarding") or {}
    if not MICROTIME_RE.fullmatch(str(event.get("eventTime") or "")):
        causes.append(("eventTime", "FieldValueRequired", "Required value"))
    elif not regarding.get("namespace") and ns not in ("default", "kube-system"):
        causes.append(("involvedObject.namespace", "FieldValueInvalid",
                       'Invalid value: "": does not match event.namespace'))
    rc = event.get("reportingController") or ""
    if not rc:
        causes.append(("reportingController", "FieldValueRequired", "Required value"))
    elif not is_qualified_name(rc):
        causes.append(("reportingController", "FieldValueInvalid",
                       'Invalid value: "%s": must be a qualified name' % rc))
    for field in ("reportingInstance", "action", "reason"):
        value = event.get(field) or ""
        if not value:
            causes.append((field, "FieldValueRequired", "Required value"))
        elif len(value) > 128:
            causes.append((field, "FieldValueInvalid",
                           'Invalid value: "": can have at most 128 characters'))
    if len((event.get("note") or "").encode("utf-8")) > 1024:
        causes.append(("note", "FieldValueInvalid",
                       'Invalid value: "": can have at most 1024 characters'))
    if event.get("type") not in ("Normal", "Warning"):
        causes.append(("type", "FieldValueInvalid",
                       'Invalid value: "": has invalid value: %s' % (event.get("type") or "")))
    for field in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount"):
        if event.get(field):
            causes.append((field, "FieldValueInvalid", 'Invalid value: "": needs to be unset'))
    causes += event_series_causes(event)
    if causes:
        raise invalid_event(name, causes)


def validate_event_update(new, old):
    causes = []
    for field in EVENT_IMMUTABLE:
        if new.get(field) != old.get(field):
            causes.append((field, "FieldValueInvalid",
                           "Invalid value: %s: field is immutable" % dumps(new.get(field))))
    if new.get("series") != old.get("series"):
        causes += event_series_causes(new)
    if causes:
        raise invalid_event(old["metadata"]["name"], causes)


# ---------------------------------------------------------------------------------------------
# The store: objects, the global resourceVersion, the event history and the open watches


class Event:
    __slots__ = ("rv", "res", "key", "namespace", "type", "obj", "prev")

    def __init__(self, rv, res, key, namespace, type_, obj, prev):
        self.rv, self.res, self.key, self.namespace = rv, res, key, namespace
        self.type, self.obj, self.prev = type_, obj, prev


class Watcher:
    """One open watch. Its queue is filled under the store lock, drained by its handler thread."""

    def __init__(self, res, namespace, bookmarks):
        self.res = res
        self.namespace = namespace
        self.bookmarks = bookmarks
        self.queue = collections.deque()  # (type, object) pairs, objects are never mutated
        self.drop_after = None  # events still to send before dropping; None = no drop armed
        self.partial = False
        self.hang = False  # silent until the client leaves (hang_watches)

    def matches(self, res, namespace):
        return res is self.res and (self.namespace is None or self.namespace == namespace)


class Store:
    def __init__(self, resources, history_limit, initial_rv):
        self.resources = resources
        self.cond = threading.Condition()
        self.rv = initial_rv
        self.floor = initial_rv  # every event with rv > floor is in self.history
        self.history = collections.deque()
        self.history_limit = history_limit
        self.objects = {r: {} for r in resources.values()}
        self.watchers = set()
        self.uid_counter = 0

    # All methods below REQUIRE self.cond held.

    def next_uid(self):
        self.uid_counter += 1
        n = self.uid_counter
        return "%08x-0000-4000-8000-%012x" % (n, n)

    def commit(self, res, key, namespace, type_, obj, prev):
        """Records one write: bumps the rv, stores, appends history, feeds watchers."""
        self.rv += 1
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        obj = wire_order(obj, res.builtin)
        if type_ == "DELETED":
            self.objects[res].pop(key, None)
        else:
            self.objects[res][key] = obj
        self.history.append(Event(self.rv, res, key, namespace, type_, obj, prev))
        while len(self.history) > self.history_limit:
            self.floor = self.history.popleft().rv
        for w in self.watchers:
            if w.matches(res, namespace):
                w.queue.append((type_, obj))
        self.cond.notify_all()
        return obj

    def compact(self):
        self.history.clear()
        self.floor = self.rv

    def snapshot(self, res, rv):
        """Objects of `res` as they were at `rv` (REQUIRES rv >= floor): undo later history."""
        objs = dict(self.objects[res])
        for ev in reversed(self.history):
            if ev.rv <= rv:
                break
            if ev.res is not res:
                continue
            if ev.prev is None:
                objs.pop(ev.key, None)
            else:
                objs[ev.key] = ev.prev
        return objs

    def bookmark_object(self, res):
        if res.bookmark_body is None:  # custom resource (unstructured)
            return {"kind": res.kind, "apiVersion": res.api_version,
                    "metadata": {"resourceVersion": str(self.rv)}}
        obj = {"kind": res.kind, "apiVersion": res.api_version,
               "metadata": {"resourceVersion": str(self.rv), "creationTimestamp": None}}
        obj.update(copy.deepcopy(res.bookmark_body))
        return obj


# ---------------------------------------------------------------------------------------------
# Continue tokens: unpadded base64url of {"v":"meta.k8s.io/v1","rv":N,"start":"key\u0000"}


def encode_continue(rv, start):
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token):
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw.decode("utf-8"))
        if data.get("v") != "meta.k8s.io/v1" or not isinstance(data.get("rv"), int):
            raise ValueError("continue key is not valid: incorrect encoded start resourceVersion"
                             " (version meta.k8s.io/v1)")
        return data["rv"], str(data.get("start", ""))
    except ValueError as e:
        raise bad_request("invalid continue token: continue key is not valid: %s" % e)
    except Exception as e:  # binascii errors, UnicodeDecodeError...
        raise bad_request("invalid continue token: continue key is not valid: %s" % e)


# ---------------------------------------------------------------------------------------------
# The API


class Api:
    def __init__(self, args):
        groups = {"none": [], "": [], "both": ["scheduling.x-k8s.io", "scheduling.sigs.k8s.io"]}
        self.eq_groups = groups.get(args.group, [g for g in args.group.split(",") if g])
        self.dra_versions = ([] if args.dra_version in (None, "", "none")
                             else [v for v in args.dra_version.split(",") if v])
        self.resources = make_resources(self.eq_groups, self.dra_versions)
        self.group_apis = []
        for name in [n for n in (getattr(args, "group_apis", "") or "").split(",") if n]:
            if name not in GROUP_API_RESOURCES:
                raise SystemExit("--group-apis: unknown " + name)
            self.group_apis.append(name)
            res = group_api_resource(name)
            self.resources[(res.group, res.version, res.plural)] = res
        self.store = Store(self.resources, args.history, args.initial_rv)
        self.port = 0
        self.lock = threading.Lock()  # guards the test controls below
        self.token = args.token
        self.binding_failures = []  # queued injected failure codes
        self.pdb_refusal = None  # None or "budget" / "processing"
        self.delays = []  # dicts: ms, count, path_prefix, method
        self.grace_seconds = 0  # /_double/graceful_deletion
        self.faults = []  # dicts: count, code, retry_after, mode, path_prefix, method, watch
        self.bookmark_interval = float(getattr(args, "bookmark_interval", 0) or 0)
        self.unready_until = 0.0  # time.monotonic() until which the server is "starting"
        self.requests = []
        self.request_seq = 0
        self.request_log = not getattr(args, "no_request_log", False)
        self.drop_scheduling_gates = getattr(args, "drop_scheduling_gates", False)

    # ----- controls -----

    def record(self, entry):
        if not self.request_log:
            return
        with self.lock:
            self.request_seq += 1
            entry["seq"] = self.request_seq
            self.requests.append(entry)
            if len(self.requests) > 200000:
                del self.requests[:100000]

    def fault_for(self, method, path, watch):
        """The fault rule the request matches, consumed (one of its count), or None."""
        with self.lock:
            for f in self.faults:
                if f["count"] == 0:
                    continue
                if f.get("method") and f["method"] != method:
                    continue
                if not path.startswith(f.get("path_prefix", "")):
                    continue
                if f.get("watch") is not None and bool(f["watch"]) != watch:
                    continue
                if f["count"] > 0:
                    f["count"] -= 1
                return dict(f)
        return None

    def starting(self):
        return time.monotonic() < self.unready_until

    def save(self, path):
        s = self.store
        with s.cond:
            data = {"resourceVersion": s.rv, "uidCounter": s.uid_counter,
                    "groups": list(self.eq_groups),
                    "objects": [{"group": r.group, "version": r.version, "plural": r.plural,
                                 "items": [s.objects[r][k] for k in sorted(s.objects[r])]}
                                for r in self.resources.values()]}
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
        return {"resourceVersion": data["resourceVersion"]}

    def load(self, path):
        with open(path) as f:
            data = json.load(f)
        for g in data.get("groups", []):
            self.install_group(g)
        s = self.store
        with s.cond:
            s.rv = int(data["resourceVersion"])
            s.floor = s.rv
            s.history.clear()
            s.uid_counter = int(data.get("uidCounter", 0))
            for entry in data.get("objects", []):
                res = self.resources.get((entry["group"], entry["version"], entry["plural"]))
                if res is None:
                    continue
                for obj in entry["items"]:
                    meta = obj.get("metadata", {})
                    s.objects[res][object_key(meta.get("namespace"), meta["name"])] = obj

    def delay_for(self, method, path):
        with self.lock:
            for d in self.delays:
                if d["count"] == 0:
                    continue
                if d.get("method") and d["method"] != method:
                    continue
                if not path.startswith(d.get("path_prefix", "")):
                    continue
                if d["count"] > 0:
                    d["count"] -= 1
                return d["ms"] / 1000.0
        return 0.0

    def control(self, method, path, query, body):
        s = self.store
        if method == "GET" and path == "/_double/state":
            with s.cond:
                return 200, {"resourceVersion": s.rv, "floor": s.floor,
                             "history": len(s.history), "watchers": len(s.watchers)}
        if method == "GET" and path == "/_double/requests":
            since = int(query.get("since", ["0"])[0])
            with self.lock:
                return 200, {"requests": [r for r in self.requests if r["seq"] > since]}
        if method == "POST" and path == "/_double/requests/clear":
            with self.lock:
                self.requests = []
            return 200, {}
        if method == "GET" and path == "/_double/objects":
            plural = query.get("resource", ["pods"])[0]
            res = self.find_by_plural(plural, query.get("group", [None])[0])
            with s.cond:
                items = [s.objects[res][k] for k in sorted(s.objects[res])]
                return 200, {"resourceVersion": str(s.rv), "items": items}
        if method != "POST":
            raise not_found_path()
        if path == "/_double/drop_watches":
            return 200, {"dropped": self.drop_watches(int(body.get("after_events", 0)),
                                                      bool(body.get("partial", False)))}
        if path == "/_double/compact":
            with s.cond:
                s.compact()
                return 200, {"resourceVersion": s.rv}
        if path == "/_double/restart":
            dropped = self.drop_watches(0, False)
            with s.cond:
                s.rv += int(body.get("bump", 0))
                s.compact()
                return 200, {"resourceVersion": s.rv, "dropped": dropped}
        if path == "/_double/bookmark":
            with s.cond:
                n = 0
                for w in s.watchers:
                    if w.bookmarks:
                        w.queue.append(("BOOKMARK", s.bookmark_object(w.res)))
                        n += 1
                s.cond.notify_all()
                return 200, {"bookmarks": n}
        if path == "/_double/inject_binding_failures":
            with self.lock:
                self.binding_failures = [int(body.get("code", 500))] * int(body.get("count", 1))
            return 200, {}
        if path == "/_double/pdb_refusal":
            with self.lock:
                self.pdb_refusal = (body.get("style", "budget") if body.get("enabled", True)
                                    else None)
            return 200, {}
        if path == "/_double/token":
            with self.lock:
                self.token = body.get("token")
            return 200, {}
        if path == "/_double/delay":
            with self.lock:
                if int(body.get("ms", 0)) <= 0:
                    self.delays = []
                else:
                    self.delays.append({"ms": int(body["ms"]), "count": int(body.get("count", -1)),
                                        "path_prefix": body.get("path_prefix", ""),
                                        "method": body.get("method", "")})
            return 200, {}
        if path == "/_double/graceful_deletion":
            with self.lock:
                self.grace_seconds = max(0, int(body.get("seconds", 0)))
            return 200, {"seconds": self.grace_seconds}
        if path == "/_double/churn":
            return 200, self.churn(body)
        if path == "/_double/fail":
            with self.lock:
                if body.get("clear"):
                    self.faults = []
                else:
                    mode = body.get("mode", "status")
                    if mode not in ("status", "reset", "truncate"):
                        raise bad_request("unknown fault mode " + str(mode))
                    self.faults.append({
                        "count": int(body.get("count", 1)), "code": int(body.get("code", 500)),
                        "retry_after": body.get("retry_after"), "mode": mode,
                        "path_prefix": body.get("path_prefix", ""),
                        "method": body.get("method", ""), "watch": body.get("watch")})
            return 200, {}
        if path == "/_double/hang_watches":
            with s.cond:
                for w in s.watchers:
                    w.hang = True
                s.cond.notify_all()
                return 200, {"hung": len(s.watchers)}
        if path == "/_double/save":
            if not body.get("path"):
                raise bad_request("save needs a path")
            return 200, self.save(body["path"])
        if path == "/_double/expire_events":
            events = self.resources[("events.k8s.io", "v1", "events")]
            with s.cond:
                keys = sorted(s.objects[events])
                for k in keys:
                    self.delete_locked(events, k, s.objects[events][k])
            return 200, {"deleted": len(keys)}
        if path == "/_double/install_group":
            return 200, self.install_group(body.get("group", "scheduling.x-k8s.io"),
                                           body.get("version"))
        if path == "/_double/create_many":
            return 201, self.create_many(body)
        raise not_found_path()

    def install_group(self, group, version=None):
        s = self.store
        if group in GROUP_API_RESOURCES:
            with s.cond:
                if group not in self.group_apis:
                    self.group_apis.append(group)
                    res = group_api_resource(group)
                    self.resources[(res.group, res.version, res.plural)] = res
                    s.objects[res] = {}
                return {"groups": list(self.eq_groups), "groupApis": list(self.group_apis)}
        with s.cond:
            if group == DRA_GROUP:
                if not self.dra_versions:
                    self.dra_versions = [v for v in (version or "v1").split(",") if v]
                    for res in [r for v in self.dra_versions for r in dra_resources(v)]:
                        self.resources[(res.group, res.version, res.plural)] = res
                        s.objects[res] = {}
                return {"groups": list(self.eq_groups), "dra": ",".join(self.dra_versions)}
            if group not in self.eq_groups:
                self.eq_groups.append(group)
                res = Resource(group, "v1alpha1", "elasticquotas", "ElasticQuota", True, False,
                               None, has_generation=True)
                self.resources[(res.group, res.version, res.plural)] = res  # shared with the store
                s.objects[res] = {}
            return {"groups": list(self.eq_groups)}

    def drop_watches(self, after_events, partial):
        s = self.store
        with s.cond:
            for w in s.watchers:
                w.drop_after = after_events
                w.partial = partial
            s.cond.notify_all()
            return len(s.watchers)

    def churn(self, body):
        res = self.find_by_plural(body.get("resource", "pods"), body.get("group"))
        ns = body.get("namespace", "default") if res.namespaced else None
        prefix = body.get("prefix", "churn-")
        action = body.get("action", "create")
        count = int(body.get("count", 1))
        s = self.store
        with s.cond:
            first = s.rv
            if action == "create":
                for i in range(count):
                    obj = {"metadata": {"name": "%s%d" % (prefix, i), "labels": {"churn": "0"}}}
                    if res.plural == "pods":
                        obj["spec"] = {"containers": [{"name": "c", "image": "pause",
                                                       "resources": {"requests": {"cpu": "10m"}}}]}
                    self.create_locked(res, ns, obj)
            else:
                keys = [k for k in sorted(s.objects[res])
                        if s.objects[res][k]["metadata"]["name"].startswith(prefix)
                        and (ns is None or s.objects[res][k]["metadata"].get("namespace") == ns)]
                for k in keys:
                    old = s.objects[res][k]
                    if action == "relabel":
                        new = copy.deepcopy(old)
                        labels = new["metadata"].setdefault("labels", {})
                        labels["churn"] = str(int(labels.get("churn", "0")) + 1)
                        s.commit(res, k, old["metadata"].get("namespace"), "MODIFIED", new, old)
                    elif action == "delete":
                        self.delete_locked(res, k, old)
                    else:
                        raise bad_request("unknown churn action " + action)
            return {"first": first + 1, "last": s.rv}

    def create_many(self, body):
        res = self.find_by_plural(body.get("resource", "pods"), body.get("group"))
        items = body.get("items")
        if not isinstance(items, list):
            raise bad_request("create_many: items must be a list of objects")
        s = self.store
        with s.cond:
            first = s.rv
            for item in items:
                ns = ((item.get("metadata") or {}).get("namespace") if isinstance(item, dict)
                      else None)
                if res.namespaced and not ns:
                    raise bad_request("create_many: a %s needs metadata.namespace" % res.kind)
                self.create_locked(res, ns if res.namespaced else None, item)
            return {"created": len(items), "first": first + 1, "last": s.rv}

    def served_groups(self):
        """(group, versions) as GET /apis lists them: the base groups, DRA's when served, then the
        ElasticQuota groups; the pod-group APIs add their version to their group (or the group
        itself)."""
        served = [(g, list(v)) for g, v in BASE_GROUPS]
        if self.dra_versions:
            served.append((DRA_GROUP, list(self.dra_versions)))
        served += [(g, ["v1alpha1"]) for g in self.eq_groups]
        for name in self.group_apis:
            group, version, _, _ = GROUP_API_RESOURCES[name]
            for g, versions in served:
                if g == group:
                    if version not in versions:
                        versions.append(version)
                    break
            else:
                served.append((group, [version]))
        return served

    def find_by_plural(self, plural, group=None):
        for r in self.resources.values():
            if r.plural == plural and (group is None or r.group == group):
                return r
        raise bad_request("unknown resource " + plural)

    # ----- discovery -----

    def discovery(self, path):
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:%d" % self.port}]}
        if path == "/api/v1":
            return {"kind": "APIResourceList", "groupVersion": "v1",
                    "resources": CORE_V1_RESOURCES}
        if path == "/apis":
            groups = []
            for name, versions in self.served_groups():
                vs = [{"groupVersion": name + "/" + v, "version": v} for v in versions]
                groups.append({"name": name, "versions": vs, "preferredVersion": vs[0]})
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
        m = re.fullmatch(r"/apis/([^/]+)/([^/]+)", path)
        if m:
            group, version = m.groups()
            served = dict(self.served_groups())
            if version in served.get(group, []):
                return {"kind": "APIResourceList", "apiVersion": "v1",
                        "groupVersion": group + "/" + version,
                        "resources": group_resources(group, version, self.group_apis,
                                                     self.eq_groups)}
        return None

    # ----- reads -----

    def get(self, res, ns, name):
        with self.store.cond:
            obj = self.store.objects[res].get(object_key(ns, name))
            if obj is None:
                raise not_found(res, name)
            return obj

    def list(self, res, ns, query):
        s = self.store
        limit = int(query.get("limit", ["0"])[0] or 0)
        token = query.get("continue", [""])[0]
        rv_param = query.get("resourceVersion", [""])[0]
        rv_match = query.get("resourceVersionMatch", [""])[0]
        if rv_match and not rv_param:
            msg = ("resourceVersionMatch is forbidden unless resourceVersion is provided")
            raise ApiError(422, status_body(
                422, "Invalid",
                'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: ' + msg,
                {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [
                    {"reason": "FieldValueForbidden", "message": "Forbidden: " + msg,
                     "field": "resourceVersionMatch"}]}))
        start = ""
        with s.cond:
            list_rv = s.rv
            if token:
                token_rv, start = decode_continue(token)
                if token_rv == -1:
                    list_rv = s.rv  # an "inconsistent" token: continue at the current state
                elif token_rv < s.floor:
                    raise ApiError(410, status_body(
                        410, "Expired",
                        "The provided continue parameter is too old to display a consistent list "
                        "result. You can start a new list without the continue parameter, or use "
                        "the continue token in this response to retrieve the remainder of the "
                        "results. Continuing with the provided token results in an inconsistent "
                        "list - objects that were created, modified, or deleted between the time "
                        "the first chunk was returned and now may show up in the list.",
                        metadata={"continue": encode_continue(-1, start)}))
                else:
                    list_rv = token_rv
            elif rv_match == "Exact":
                want = int(rv_param)
                if want < s.floor:
                    raise ApiError(410, status_body(
                        410, "Expired", "The resourceVersion for the provided list is too old."))
                list_rv = min(want, s.rv)
            objs = s.snapshot(res, list_rv) if list_rv != s.rv else s.objects[res]
            keys = sorted(k for k, o in objs.items()
                          if ns is None or o["metadata"].get("namespace") == ns)
            if start:
                keys = [k for k in keys if k >= start]
            items = [objs[k] for k in keys]
        meta = {"resourceVersion": str(list_rv)}
        paged = bool(limit or token)
        if limit and len(items) > limit:
            meta["continue"] = encode_continue(list_rv, keys[limit - 1] + "\u0000")
            meta["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        if res.builtin:
            out_items = []
            for o in items:
                o = dict(o)
                o.pop("kind", None)
                o.pop("apiVersion", None)
                out_items.append(o)
            return {"kind": res.kind + "List", "apiVersion": res.api_version, "metadata": meta,
                    "items": out_items}
        # Custom resources come back as unstructured JSON with sorted keys (capture 14, 15).
        if paged and "continue" not in meta:
            meta["continue"] = ""
        return {"apiVersion": res.api_version, "items": items, "kind": res.kind + "List",
                "metadata": dict(sorted(meta.items()))}

    def open_watch(self, res, ns, query):
        """Registers a watcher and returns (watcher, initial events) or an ERROR event."""
        s = self.store
        rv_param = query.get("resourceVersion", [""])[0]
        bookmarks = query.get("allowWatchBookmarks", ["false"])[0] in ("true", "1", "True")
        with s.cond:
            w = Watcher(res, ns, bookmarks)
            initial = []
            if rv_param in ("", "0"):
                for k in sorted(s.objects[res]):
                    o = s.objects[res][k]
                    if w.matches(res, o["metadata"].get("namespace")):
                        initial.append(("ADDED", o))
            else:
                try:
                    rv = int(rv_param)
                except ValueError:
                    raise bad_request('invalid resource version "%s"' % rv_param)
                if rv < s.floor:
                    return None, [("ERROR", status_body(
                        410, "Expired", "too old resource version: %d (%d)" % (rv, s.floor)))]
                if rv > s.rv:
                    # A resourceVersion this server never had (it was started fresh): as the
                    # watch cache answers once its 3 s wait for it runs out (not waited here).
                    return None, [("ERROR", status_body(
                        504, "Timeout",
                        "Timeout: Too large resource version: %d, current: %d" % (rv, s.rv),
                        {"causes": [{"reason": "ResourceVersionTooLarge",
                                     "message": "Too large resource version"}],
                         "retryAfterSeconds": 1}))]
                for ev in s.history:
                    if ev.rv > rv and w.matches(ev.res, ev.namespace):
                        initial.append((ev.type, ev.obj))
            w.queue.extend(initial)
            s.watchers.add(w)
            return w, []

    def close_watch(self, w):
        with self.store.cond:
            self.store.watchers.discard(w)

    # ----- writes -----

    def create(self, res, ns, body, dry_run=False):
        with self.store.cond:
            return self.create_locked(res, ns, body, dry_run)

    def create_locked(self, res, ns, body, dry_run=False):
        s = self.store
        obj = copy.deepcopy(body)
        if not isinstance(obj, dict):
            raise bad_request("the object provided is unrecognized (must be of type %s)" % res.kind)
        if obj.setdefault("kind", res.kind) != res.kind or \
                obj.setdefault("apiVersion", res.api_version) != res.api_version:
            raise bad_request("the API version in the data (%s) does not match the expected API "
                              "version (%s)" % (obj.get("apiVersion"), res.api_version))
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = "%s%05x" % (meta["generateName"], s.uid_counter + 1)
        name = meta.get("name", "")
        if not name:
            msg = "Required value: name or generateName is required"
            raise ApiError(422, status_body(
                422, "Invalid", '%s "" is invalid: metadata.name: %s' % (res.kind, msg),
                {"kind": res.kind, "causes": [{"reason": "FieldValueRequired", "message": msg,
                                               "field": "metadata.name"}]}))
        if not NAME_RE.fullmatch(name):
            msg = ('Invalid value: "%s": a lowercase RFC 1123 subdomain must consist of lower case '
                   "alphanumeric characters, '-' or '.', and must start and end with an "
                   "alphanumeric character" % name)
            raise ApiError(422, status_body(
                422, "Invalid", '%s "%s" is invalid: [metadata.name: %s]' % (res.kind, name, msg),
                {"name": name, "kind": res.kind, "causes": [
                    {"reason": "FieldValueInvalid", "message": msg, "field": "metadata.name"}]}))
        if res.namespaced:
            if meta.get("namespace", ns) != ns:
                raise bad_request("the namespace of the provided object does not match the "
                                  "namespace sent on the request")
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        key = object_key(meta.get("namespace"), name)
        if key in s.objects[res]:
            raise ApiError(409, status_body(409, "AlreadyExists", '%s "%s" already exists'
                                            % (res.qualified, name), res.details(name)))
        meta["uid"] = s.next_uid()
        meta["creationTimestamp"] = now_rfc3339()
        meta.pop("resourceVersion", None)
        if res.has_generation:
            meta["generation"] = 1
        if res.plural == "pods":
            spec = obj.setdefault("spec", {})
            spec.setdefault("schedulerName", "default-scheduler")
            pc_name = spec.get("priorityClassName")
            pcs = s.objects[self.resources[("scheduling.k8s.io", "v1", "priorityclasses")]]
            if "priority" not in spec:
                spec["priority"] = pcs[pc_name].get("value", 0) if pc_name in pcs else 0
            if self.drop_scheduling_gates:  # a 1.26 server without PodSchedulingReadiness
                spec.pop("schedulingGates", None)
            obj.setdefault("status", {"phase": "Pending"})
        elif res.bookmark_body and "status" in res.bookmark_body:
            obj.setdefault("status", copy.deepcopy(res.bookmark_body["status"]))
        if res.plural == "events":
            validate_event_create(obj, meta.get("namespace"))
        if dry_run:  # ?dryRun=All: validated and defaulted, never stored
            obj["metadata"]["resourceVersion"] = ""
            return wire_order(obj, res.builtin)
        return s.commit(res, key, meta.get("namespace"), "ADDED", obj, None)

    def update(self, res, ns, name, subresource, body):
        """PUT: whole object (or its status). metadata.resourceVersion, if set, must match."""
        with self.store.cond:
            old = self.store.objects[res].get(object_key(ns, name))
            if old is None:
                raise not_found(res, name)
            if not isinstance(body, dict):
                raise bad_request("the object provided is unrecognized (must be of type %s)"
                                  % res.kind)
            want_rv = (body.get("metadata") or {}).get("resourceVersion")
            if want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise conflict_modified(res, name)
            return self.write_changed(res, ns, name, old, subresource, body)

    def patch(self, res, ns, name, subresource, content_type, raw):
        builtin_types = ["application/json-patch+json", "application/merge-patch+json",
                         "application/strategic-merge-patch+json", "application/apply-patch+yaml"]
        accepted = builtin_types if res.builtin else [t for t in builtin_types
                                                      if "strategic" not in t]
        if content_type not in accepted or content_type == "application/apply-patch+yaml":
            raise ApiError(415, status_body(
                415, "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types "
                "include: " + ", ".join(accepted)))
        try:
            patch = json.loads(raw.decode("utf-8"))
        except Exception as e:
            raise bad_request("error decoding patch: %s" % e)
        with self.store.cond:
            old = self.store.objects[res].get(object_key(ns, name))
            if old is None:
                raise not_found(res, name)
            try:
                if content_type == "application/json-patch+json":
                    merged = json_patch(old, patch)
                else:
                    if not isinstance(patch, dict):
                        raise ValueError("a merge patch must be a JSON object")
                    merged = json_merge(old, patch)
            except (ValueError, KeyError, IndexError, TypeError) as e:
                raise ApiError(422, status_body(422, "Invalid", "the patch could not be applied: "
                                                "%s" % e, res.details(name)))
            want_rv = (patch.get("metadata") or {}).get("resourceVersion") \
                if isinstance(patch, dict) else None
            if want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise conflict_modified(res, name)
            return self.write_changed(res, ns, name, old, subresource, merged)

    def write_changed(self, res, ns, name, old, subresource, new):
        """Applies `new` to `old` as the main resource or its status; no-op writes keep the rv."""
        if subresource == "status":
            result = copy.deepcopy(old)
            if "status" in new:
                result["status"] = copy.deepcopy(new["status"])
            else:
                result.pop("status", None)
        else:
            result = copy.deepcopy(new)
            result["kind"], result["apiVersion"] = res.kind, res.api_version
            meta = result.setdefault("metadata", {})
            for k in ("name", "namespace", "uid", "creationTimestamp", "generation",
                      "deletionTimestamp", "deletionGracePeriodSeconds"):
                if k in old["metadata"]:
                    meta[k] = old["metadata"][k]
                else:
                    meta.pop(k, None)
            if res.status_subresource:  # status changes through the main resource are dropped
                if "status" in old:
                    result["status"] = copy.deepcopy(old["status"])
                else:
                    result.pop("status", None)
            if res.has_generation and result.get("spec") != old.get("spec"):
                meta["generation"] = old["metadata"].get("generation", 1) + 1
        result["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if res.plural == "events":
            validate_event_update(result, old)
        if result == old:
            return old
        return self.store.commit(res, object_key(ns, name), ns, "MODIFIED", result, old)

    def delete(self, res, ns, name):
        with self.store.cond:
            key = object_key(ns, name)
            old = self.store.objects[res].get(key)
            if old is None:
                raise not_found(res, name)
            return self.delete_locked(res, key, old)

    def delete_locked(self, res, key, old):
        s = self.store
        ns = old["metadata"].get("namespace")
        if res.plural == "pods" and old["metadata"].get("deletionTimestamp"):
            return old  # already terminating: its deletion is under way
        with self.lock:
            grace = self.grace_seconds
        if res.plural == "pods" and grace > 0 and (old.get("spec") or {}).get("nodeName"):
            marked = copy.deepcopy(old)
            # As the apiserver writes it: the time the grace period ends.
            marked["metadata"]["deletionTimestamp"] = (
                datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=grace)
            ).strftime("%Y-%m-%dT%H:%M:%SZ")
            marked["metadata"]["deletionGracePeriodSeconds"] = grace
            marked = s.commit(res, key, ns, "MODIFIED", marked, old)
            uid = marked["metadata"]["uid"]
            timer = threading.Timer(grace, self.finish_deletion, (res, key, uid))
            timer.daemon = True
            timer.start()
            return marked
        if res.plural == "pods":
            marked = copy.deepcopy(old)
            marked["metadata"]["deletionTimestamp"] = now_rfc3339()
            marked["metadata"]["deletionGracePeriodSeconds"] = 0
            old = s.commit(res, key, ns, "MODIFIED", marked, old)
        s.commit(res, key, ns, "DELETED", old, old)
        return old

    def finish_deletion(self, res, key, uid):
        """The end of a graceful deletion: the kubelet reported the pod gone."""
        s = self.store
        with s.cond:
            obj = s.objects[res].get(key)
            if obj is not None and obj["metadata"]["uid"] == uid:
                s.commit(res, key, obj["metadata"].get("namespace"), "DELETED", obj, obj)

    def bind(self, pods, ns, name, body):
        with self.lock:
            injected = self.binding_failures.pop(0) if self.binding_failures else None
        if injected == 409:
            raise ApiError(409, status_body(
                409, "Conflict", 'Operation cannot be fulfilled on pods/binding "%s": injected '
                "conflict (apiserver_double)" % name, {"name": name, "kind": "pods/binding"}))
        if injected is not None:
            raise ApiError(injected, status_body(
                injected, "InternalError",
                "Internal error occurred: injected failure (apiserver_double)",
                {"causes": [{"message": "injected failure (apiserver_double)"}]}))
        if not isinstance(body, dict) or not (body.get("target") or {}).get("name"):
            raise ApiError(422, status_body(422, "Invalid", 'Binding.meta.k8s.io "%s" is invalid: '
                                            "target.name: Required value" % name,
                                            {"name": name, "kind": "Binding"}))
        node = body["target"]["name"]
        with self.store.cond:
            key = object_key(ns, name)
            pod = self.store.objects[pods].get(key)
            if pod is None:
                raise not_found(pods, name)
            want_rv = (body.get("metadata") or {}).get("resourceVersion")
            if want_rv and want_rv != pod["metadata"]["resourceVersion"]:
                raise ApiError(409, status_body(
                    409, "Conflict",
                    'Operation cannot be fulfilled on pods "%s": StorageError: invalid object, '
                    "Code: 4, Key: /registry/pods/%s/%s, ResourceVersion: 0, AdditionalErrorMsg: "
                    "Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in "
                    "object meta: %s" % (name, ns, name, want_rv, pod["metadata"]["resourceVersion"]),
                    {"name": name, "kind": "pods"}))
            assigned = (pod.get("spec") or {}).get("nodeName")
            if assigned:
                raise ApiError(409, status_body(
                    409, "Conflict", 'Operation cannot be fulfilled on pods/binding "%s": pod %s is '
                    'already assigned to node "%s"' % (name, name, assigned),
                    {"name": name, "kind": "pods/binding"}))
            new = copy.deepcopy(pod)
            new.setdefault("spec", {})["nodeName"] = node
            status = new.setdefault("status", {})
            conds = [c for c in status.get("conditions", []) if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": now_rfc3339()})
            status["conditions"] = conds
            self.store.commit(pods, key, ns, "MODIFIED", new, pod)
        return success_status(201)

    def evict(self, pods, ns, name, body):
        with self.store.cond:
            key = object_key(ns, name)
            pod = self.store.objects[pods].get(key)
            if pod is None:
                raise not_found(pods, name)
            opts = (body or {}).get("deleteOptions") or {} if isinstance(body, dict) else {}
            want_uid = (opts.get("preconditions") or {}).get("uid")
            if want_uid and want_uid != pod["metadata"]["uid"]:
                raise ApiError(409, status_body(
                    409, "Conflict", 'Operation cannot be fulfilled on Pod "%s": Precondition '
                    "failed: UID in precondition: %s, UID in object meta: %s"
                    % (name, want_uid, pod["metadata"]["uid"]), {"name": name, "kind": "Pod"}))
            with self.lock:
                style = self.pdb_refusal
            phase = (pod.get("status") or {}).get("phase", "Pending")
            terminating = bool(pod["metadata"].get("deletionTimestamp"))
            if style and phase not in ("Pending", "Succeeded", "Failed") and not terminating:
                pdbs = self.resources[("policy", "v1", "poddisruptionbudgets")]
                labels = pod["metadata"].get("labels") or {}
                for pdb in sorted(self.store.objects[pdbs].values(),
                                  key=lambda o: o["metadata"]["name"]):
                    if pdb["metadata"].get("namespace") != ns or \
                            not selector_matches((pdb.get("spec") or {}).get("selector"), labels):
                        continue
                    pdb_name = pdb["metadata"]["name"]
                    details = {"causes": [{"reason": "DisruptionBudget"}]}
                    headers = {}
                    if style == "processing":
                        details["causes"][0]["message"] = (
                            "The disruption budget %s is still being processed by the server."
                            % pdb_name)
                        details["retryAfterSeconds"] = 10
                        headers["Retry-After"] = "10"
                    else:
                        min_avail = (pdb.get("spec") or {}).get("minAvailable", 1)
                        details["causes"][0]["message"] = (
                            "The disruption budget %s needs %s healthy pods and has %s currently"
                            % (pdb_name, min_avail, min_avail))
                    raise ApiError(429, status_body(
                        429, "TooManyRequests",
                        "Cannot evict pod as it would violate the pod's disruption budget.",
                        details), headers)
            self.delete_locked(pods, key, pod)
        return success_status(201)


# ---------------------------------------------------------------------------------------------
# HTTP


RESOURCE_PATH = re.compile(
    r"/(?:api/(?P<cv>v1)|apis/(?P<g>[^/]+)/(?P<v>[^/]+))(?:/namespaces/(?P<ns>[^/]+))?"
    r"/(?P<plural>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without TCP_NODELAY the body waits for the
    # client's delayed ACK (~40 ms per request on loopback). The bytes on the wire are the same.
    disable_nagle_algorithm = True
    api = None  # set by main()
    verbose = False

    def log_message(self, fmt, *args):
        if self.verbose:
            sys.stderr.write("apiserver_double: " + (fmt % args) + "\n")

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    # ----- plumbing -----

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            for _ in range(1 << 20):  # bounded: a body of at most 1M chunks
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            return data
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def record_request(self):
        """Logs the request once, before its answer leaves: a client that got the answer
        always finds its request in the log."""
        entry, self.log_entry = self.log_entry, None
        if entry is not None:
            entry["status"] = self.status_code
            entry["at"] = time.time()
            entry["answered"] = time.monotonic()
            self.api.record(entry)

    def common_headers(self, content_type):
        self.record_request()
        self.send_response_only(self.status_code)
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Type", content_type)
        self.send_header("X-Kubernetes-Pf-Flowschema-Uid", "dff791d5-6cfc-4e93-bfb6-28ee87ff1f1a")
        self.send_header("X-Kubernetes-Pf-Prioritylevel-Uid",
                         "c60b22a5-7c7b-42b4-8a6c-68eefb008be4")
        self.send_header("Date", email.utils.formatdate(usegmt=True))

    def send_bytes(self, code, data, content_type="application/json", headers=None):
        """Bodies over 2 KB go out chunked, like Go's net/http (README fact 6)."""
        self.status_code = code
        self.common_headers(content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if len(data) > 2048:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            out = bytearray()
            for i in range(0, len(data), 4096):
                part = data[i:i + 4096]
                out += b"%x\r\n" % len(part) + part + b"\r\n"
            out += b"0\r\n\r\n"
        else:
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            out = data
        if getattr(self, "truncate", False):
            # Fault injection: half the body, then the connection goes away.
            self.truncate = False
            self.wfile.write(bytes(out[:len(out) // 2]))
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.wfile.write(bytes(out))

    def send_json(self, code, obj, headers=None):
        # Go's json.Encoder ends every document with a newline (capture 33: 79 bytes + "\n").
        self.send_bytes(code, (dumps(obj) + "\n").encode("utf-8"), headers=headers)

    def authenticated(self):
        with self.api.lock:
            token = self.api.token
        if token is None:
            return True
        if self.headers.get("Authorization", "") == "Bearer " + token:
            return True
        getpeercert = getattr(self.connection, "getpeercert", None)
        return bool(getpeercert and getpeercert())

    def dispatch(self, method):
        arrived = time.monotonic()  # before the body is read or any delay is slept
        url = urllib.parse.urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        body = self.read_body()
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        self.status_code = 0
        self.log_entry = None
        if self.api.request_log and not path.startswith("/_double/"):
            self.log_entry = {"method": method, "path": path, "query": url.query,
                              "arrived": arrived, "content_type": content_type,
                              "user_agent": self.headers.get("User-Agent") or "",
                              "body": body[:65536].decode("utf-8", "replace")}
        try:
            if path.startswith("/_double/"):
                try:
                    params = json.loads(body.decode("utf-8")) if body else {}
                except ValueError as e:
                    raise bad_request("control body is not JSON: %s" % e)
                code, obj = self.api.control(method, path, query, params)
                self.send_json(code, obj)
                return
            delay = self.api.delay_for(method, path)
            if delay > 0:
                time.sleep(delay)  # a delay a test asked for
            if self.api.starting():
                if method == "GET" and path == "/readyz":
                    self.send_bytes(500, b"[-]poststarthook/double-starting failed: not finished\n"
                                    b"readyz check failed\n", "text/plain; charset=utf-8")
                    return
                raise ApiError(503, status_body(503, "ServiceUnavailable",
                                                "the server is currently unable to handle the "
                                                "request (the double is starting)"))
            watch = query.get("watch", ["false"])[0] in ("true", "1", "True")
            fault = self.api.fault_for(method, path, watch)
            if fault is not None and self.inject(fault):
                return
            if not self.authenticated():
                raise ApiError(401, status_body(401, "Unauthorized", "Unauthorized"))
            self.route(method, path, query, content_type, body)
        except ApiError as e:
            if e.text is not None:
                self.send_bytes(e.code, e.text.encode(), "text/plain; charset=utf-8",
                                {"X-Content-Type-Options": "nosniff"})
            else:
                self.send_json(e.code, e.body, e.headers)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
        except Exception as e:  # a bug in the double: answer 500 rather than hang the client
            import traceback
            traceback.print_exc()
            self.close_connection = True
            if self.status_code == 0:
                self.send_json(500, status_body(500, "InternalError",
                                                "apiserver_double bug: %r" % e))
        finally:
            self.record_request()  # when no answer was sent (client gone)

    FAULT_REASONS = {410: "Expired", 429: "TooManyRequests", 500: "InternalError",
                     503: "ServiceUnavailable", 504: "Timeout"}

    def inject(self, fault):
        """Applies a fault rule; True when the request is answered (or dropped) by it."""
        mode = fault["mode"]
        if mode == "reset":
            self.record_request()
            self.close_connection = True
            try:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
            except OSError:
                pass
            return True
        if mode == "truncate":
            self.truncate = True
            return False  # answered as usual, cut off in send_bytes
        code = fault["code"]
        details = None
        headers = {}
        if fault.get("retry_after") is not None:
            details = {"retryAfterSeconds": int(fault["retry_after"])}
            headers["Retry-After"] = str(int(fault["retry_after"]))
        raise ApiError(code, status_body(code, self.FAULT_REASONS.get(code, "InternalError"),
                                         "injected fault %d" % code, details), headers)

    def parse_json(self, body, kind):
        try:
            return json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise bad_request("the object provided is unrecognized (must be of type %s): couldn't "
                              "get version/kind; json parse error: %s" % (kind, e))

    def route(self, method, path, query, content_type, body):
        api = self.api
        if method == "GET" and path in ("/healthz", "/readyz", "/livez"):
            self.send_bytes(200, b"ok", "text/plain; charset=utf-8")
            return
        if method == "GET" and path == "/version":
            self.send_json(200, {"major": "1", "minor": "26", "gitVersion": "v1.26.1-double"})
            return
        if method == "GET":
            doc = api.discovery(path)
            if doc is not None:
                self.send_json(200, doc)
                return
        m = RESOURCE_PATH.fullmatch(path)
        if not m:
            raise not_found_path()
        group = m.group("g") or ""
        version = m.group("cv") or m.group("v")
        res = api.resources.get((group, version, m.group("plural")))
        ns, name, sub = m.group("ns"), m.group("name"), m.group("sub")
        if res is None or (ns is not None and not res.namespaced) or \
                (ns is None and res.namespaced and name is not None):
            raise not_found_path()
        if name is None:  # the collection
            if method == "GET":
                if query.get("watch", ["false"])[0] in ("true", "1", "True"):
                    self.serve_watch(res, ns, query)
                else:
                    self.send_json(200, api.list(res, ns, query))
            elif method == "POST":
                dry_run = query.get("dryRun", [""])[0] == "All"
                self.send_json(201, api.create(res, ns, self.parse_json(body, res.kind), dry_run))
            else:
                raise ApiError(405, status_body(405, "MethodNotAllowed",
                                                "the server does not allow this method on the "
                                                "requested resource"))
            return
        if sub is not None and not (sub == "status" and res.status_subresource) and \
                not (res.plural == "pods" and sub in ("binding", "eviction")):
            raise not_found_path()
        if method == "GET" and sub in (None, "status"):
            self.send_json(200, api.get(res, ns, name))
        elif method == "POST" and sub == "binding":
            self.send_json(201, api.bind(res, ns, name, self.parse_json(body, "Binding")))
        elif method == "POST" and sub == "eviction":
            self.send_json(201, api.evict(res, ns, name, self.parse_json(body, "Eviction")))
        elif method == "PUT" and sub in (None, "status"):
            self.send_json(200, api.update(res, ns, name, sub, self.parse_json(body, res.kind)))
        elif method == "PATCH" and sub in (None, "status"):
            self.send_json(200, api.patch(res, ns, name, sub, content_type, body))
        elif method == "DELETE" and sub is None:
            self.send_json(200, api.delete(res, ns, name))
        else:
            raise ApiError(405, status_body(405, "MethodNotAllowed", "the server does not allow "
                                            "this method on the requested resource"))

    # ----- watch -----

    def write_chunks(self, payloads):
        out = bytearray()
        for p in payloads:
            out += b"%x\r\n" % len(p) + p + b"\r\n"
        self.wfile.write(bytes(out))

    def client_gone(self):
        """True when the client closed (or wrote to) the connection: it no longer reads."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def serve_watch(self, res, ns, query):
        api = self.api
        s = api.store
        timeout = float(query.get("timeoutSeconds", ["1800"])[0] or 1800)
        watcher, error_events = api.open_watch(res, ns, query)
        self.status_code = 200
        self.common_headers("application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if watcher is None:  # 410: one ERROR event, then the end of the stream (captures 75, 76)
            self.write_chunks([(dumps({"type": t, "object": o}) + "\n").encode()
                               for t, o in error_events])
            self.wfile.write(b"0\r\n\r\n")
            return
        deadline = time.monotonic() + timeout
        interval = api.bookmark_interval if watcher.bookmarks else 0
        next_bookmark = time.monotonic() + interval if interval > 0 else None
        try:
            while True:
                with s.cond:
                    while watcher.hang:
                        # Silent and never ending, until the client goes away.
                        s.cond.wait(0.2)
                        if self.client_gone():
                            return
                    while True:
                        now = time.monotonic()
                        left = deadline - now
                        if watcher.queue or watcher.drop_after == 0 or left <= 0 or watcher.hang:
                            break
                        if next_bookmark is not None and now >= next_bookmark:
                            next_bookmark = now + interval
                            watcher.queue.append(("BOOKMARK", s.bookmark_object(res)))
                            break
                        wait = min(left, 0.5)
                        if next_bookmark is not None:
                            wait = min(wait, max(next_bookmark - now, 0.001))
                        # Wait in slices so a client that went away is noticed.
                        s.cond.wait(wait)
                        if not watcher.queue and self.client_gone():
                            return
                    if watcher.hang:
                        continue
                    batch = []
                    while watcher.queue and (watcher.drop_after is None or
                                             len(batch) < watcher.drop_after):
                        batch.append(watcher.queue.popleft())
                    if watcher.drop_after is not None:
                        watcher.drop_after -= len(batch)
                    drop = watcher.drop_after == 0
                    timed_out = not drop and not watcher.queue and \
                        deadline - time.monotonic() <= 0
                    if drop:
                        next_event = watcher.queue[0] if watcher.queue else None
                    elif timed_out and watcher.bookmarks:
                        batch.append(("BOOKMARK", s.bookmark_object(res)))
                payloads = [(dumps({"type": t, "object": o}) + "\n").encode() for t, o in batch]
                if payloads:
                    self.write_chunks(payloads)
                if drop:
                    if watcher.partial and next_event is not None:
                        data = (dumps({"type": next_event[0], "object": next_event[1]}) +
                                "\n").encode()
                        self.wfile.write(b"%x\r\n" % len(data) + data[:len(data) // 2])
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                if timed_out:
                    self.wfile.write(b"0\r\n\r\n")
                    return
        finally:
            api.close_watch(watcher)


class DoubleServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    ssl_context = None
    # The listen backlog, as Go's listener asks (the kernel caps it at net.core.somaxconn).
    # socketserver's default of 5 drops connections of a burst (hundreds of clients connecting at
    # once): the client's connect may complete while the server has not accepted it yet, and its
    # request then waits in the kernel for seconds, or until a SYN retry a second later.
    request_queue_size = 4096

    def finish_request(self, request, client_address):
        # The TLS handshake runs here, on the connection's own thread, so a slow client cannot
        # stall accept().
        if self.ssl_context is not None:
            try:
                request = self.ssl_context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                if Handler.verbose:
                    sys.stderr.write("apiserver_double: TLS handshake failed: %s\n" % e)
                return
        try:
            self.RequestHandlerClass(request, client_address, self)
        finally:
            if self.ssl_context is not None:
                request.close()


def main():
    parser = argparse.ArgumentParser(description="TEST DOUBLE of kube-apiserver (not a server)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--client-ca")
    parser.add_argument("--token")
    parser.add_argument("--group", default="scheduling.x-k8s.io")
    parser.add_argument("--dra-version", default="none")
    parser.add_argument("--group-apis", default="")
    parser.add_argument("--drop-scheduling-gates", action="store_true")
    parser.add_argument("--history", type=int, default=100000)
    parser.add_argument("--initial-rv", type=int, default=100)
    parser.add_argument("--no-request-log", action="store_true")
    parser.add_argument("--tcp-nodelay", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--bookmark-interval", type=float, default=0.0)
    parser.add_argument("--load")
    parser.add_argument("--rv-bump", type=int, default=0)
    parser.add_argument("--unready-ms", type=int, default=0)
    args = parser.parse_args()

    api = Api(args)
    if args.load:
        api.load(args.load)
        with api.store.cond:  # writes made while it was down (leases, events...)
            api.store.rv += args.rv_bump
            api.store.floor = api.store.rv
    Handler.api = api
    Handler.verbose = args.verbose
    Handler.disable_nagle_algorithm = args.tcp_nodelay
    server = DoubleServer(("127.0.0.1", args.port), Handler)
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        if args.client_ca:
            ctx.load_verify_locations(args.client_ca)
            ctx.verify_mode = ssl.CERT_OPTIONAL
        server.ssl_context = ctx
    api.port = server.server_address[1]
    if args.unready_ms > 0:
        api.unready_until = time.monotonic() + args.unready_ms / 1000.0
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % api.port)
        os.replace(tmp, args.port_file)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
