#!/usr/bin/env bash
# Re-captures tests/fixtures/kube-apiserver-protobuf/ from a real kube-apiserver v1.26.1 (a
# developer tool: the tests only read the committed files). Starts etcd + kube-apiserver with
# /work/shared/kube/up.sh (or $KUBE_SHARED/up.sh) in its own folder and on its own ports, stops
# the scheduler it also starts (nothing must change the objects between the JSON and the protobuf
# capture of each), creates a varied set of pods and nodes, and writes each object twice:
# <name>.json (Accept: application/json) and <name>.pb (Accept: application/vnd.kubernetes.protobuf),
# both at the same resourceVersion (checked). Then a protobuf watch stream with ADDED, MODIFIED
# and DELETED events, a 404 body in protobuf, and, after a restart of the API server, a watch
# from a resourceVersion too old (one ERROR 410 event). Stops what it started (down.sh --wipe) on exit.
# Usage: scripts/capture-protobuf-fixtures.sh [OUT_DIR]   (default: the fixtures folder)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-tests/fixtures/kube-apiserver-protobuf}
SHARED=${KUBE_SHARED:-/work/shared/kube}
export KUBE_DIR=${KUBE_DIR:-/tmp/capext-protobuf-capture}
export APISERVER_PORT=${APISERVER_PORT:-26443} ETCD_PORT=${ETCD_PORT:-33790}
export ETCD_PEER_PORT=${ETCD_PEER_PORT:-33800} SCHED_PORT=${SCHED_PORT:-20259}
export FEATURE_GATES=PodSchedulingReadiness=true
trap '"$SHARED/down.sh" --wipe >/dev/null 2>&1 || true' EXIT
"$SHARED/down.sh" --wipe >/dev/null 2>&1 || true
"$SHARED/up.sh" >/dev/null
# The scheduler would bind pods and write their conditions: stop it (by the PID file up.sh wrote).
stop_scheduler() {
  if [[ -f $KUBE_DIR/run/pids/kube-scheduler.pid ]]; then
    kill "$(cat "$KUBE_DIR/run/pids/kube-scheduler.pid")" 2>/dev/null || true
    rm -f "$KUBE_DIR/run/pids/kube-scheduler.pid"
  fi
}
stop_scheduler

SERVER=https://127.0.0.1:$APISERVER_PORT
TOKEN=$(awk -F, '$2=="admin"{print $1}' "$KUBE_DIR/etc/tokens.csv")
KUBECTL=("$KUBE_DIR/bin/kubectl" --kubeconfig "$KUBE_DIR/etc/admin.kubeconfig")
JSON=application/json
PROTO=application/vnd.kubernetes.protobuf
# api ACCEPT PATH [curl args...]: the response body on stdout.
api() {
  local accept=$1 path=$2
  shift 2
  # Not curl's own User-Agent: kube-apiserver pretty-prints JSON for curl and wget.
  curl -sS -A capture-protobuf-fixtures --cacert "$KUBE_DIR/pki/ca.crt" -H "Authorization: Bearer $TOKEN" \
    -H "Accept: $accept" "$@" "$SERVER$path"
}
# status NAMESPACE NAME JSON_PATCH: a merge patch of the pod's status subresource.
status() {
  api $JSON "/api/v1/namespaces/$1/pods/$2/status" -X PATCH \
    -H 'Content-Type: application/merge-patch+json' -d "$3" >/dev/null
}

rm -rf "$OUT/pods" "$OUT/nodes" "$OUT"/watch-* "$OUT"/get-* "$OUT"/list-*
mkdir -p "$OUT/pods" "$OUT/nodes"

"${KUBECTL[@]}" apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: capture}
---
# No controller-manager makes them, and pods need them (ServiceAccount admission).
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: capture}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: default}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: capture-rc}
handler: runc
overhead:
  podFixed: {cpu: 250m, memory: 64Mi}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: capture-high}
value: 1000
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: capture-low}
value: -5
EOF

"${KUBECTL[@]}" create -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: multi
  namespace: capture
  labels: {app: train, scheduling.x-k8s.io/pod-group: group-a, tier: gpu}
  annotations:
    scheduling.capacity-extender.io/reclaim: "node-a@2026-01-02T03:04:05Z"
    scheduling.capacity-extender.io/min-member: "3"
    scheduling.capacity-extender.io/admitted-at: "2026-01-02T03:04:05Z"
    ti.cloud.tencent.com/gpu-type: A100
    note: "free text"
  ownerReferences:
  - {apiVersion: batch/v1, kind: Job, name: train, uid: 6d6f3c2e-0000-4000-8000-000000000001, controller: true, blockOwnerDeletion: true}
  - {apiVersion: v1, kind: ConfigMap, name: extra, uid: 6d6f3c2e-0000-4000-8000-000000000002}
spec:
  schedulerName: capacity-scheduler
  priorityClassName: capture-high
  runtimeClassName: capture-rc
  nodeSelector: {zone: z1, disk: ssd}
  tolerations:
  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 30}
  - {operator: Exists}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: zone, operator: In, values: [z1, z2]}
          - {key: gpu, operator: Exists}
          matchFields:
          - {key: metadata.name, operator: In, values: [node-a]}
        - matchExpressions:
          - {key: cores, operator: Gt, values: ["8"]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        preference:
          matchExpressions:
          - {key: rack, operator: In, values: [r1]}
  initContainers:
  - name: fetch
    image: busybox
    resources:
      requests: {cpu: "2", memory: 1Gi}
      limits: {cpu: "2", memory: 1Gi}
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: 1500m, memory: 2G, nvidia.com/gpu: "2", ephemeral-storage: 0.5Gi}
      limits: {cpu: "3", memory: 4Gi, nvidia.com/gpu: "2"}
  - name: side
    image: busybox
    resources:
      requests: {cpu: 100m, memory: "134217728"}
  - name: nothing
    image: busybox
EOF

"${KUBECTL[@]}" create -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: gated
  namespace: capture
  labels: {app: queue}
  annotations:
    scheduling.capacity-extender.io/Min-Member: "2"
    scheduling.capacity-extender.io/Reclaim: "node-b@2026-02-03T04:05:06Z"
spec:
  priorityClassName: capture-low
  schedulingGates:
  - name: example.com/other
  - name: scheduling.capacity-extender.io/quota
  - name: example.com/last
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: 250m, memory: 100Mi}
---
apiVersion: v1
kind: Pod
metadata:
  name: bound
  namespace: capture
spec:
  nodeName: node-a
  preemptionPolicy: PreemptLowerPriority
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "1", memory: 512Mi}
---
apiVersion: v1
kind: Pod
metadata:
  name: unschedulable
  namespace: capture
spec:
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "64"}
---
apiVersion: v1
kind: Pod
metadata:
  name: terminating
  namespace: capture
  finalizers: [capture.example.com/hold]
spec:
  containers:
  - name: main
    image: busybox
---
apiVersion: v1
kind: Pod
metadata:
  name: plain
  namespace: default
spec:
  containers:
  - name: main
    image: busybox
EOF

status capture bound '{"status":{"phase":"Running","startTime":"2026-01-02T03:04:05Z","conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True"}]}}'
status capture unschedulable '{"status":{"nominatedNodeName":"node-b","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/2 nodes are available"}]}}'
"${KUBECTL[@]}" delete pod -n capture terminating --wait=false >/dev/null

"${KUBECTL[@]}" create -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {zone: z1, disk: ssd, gpu: "true", kubernetes.io/hostname: node-a}
spec:
  unschedulable: true
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
  labels: {zone: z2}
EOF
api $JSON /api/v1/nodes/node-a -X PATCH -H 'Content-Type: application/merge-patch+json' \
  -d '{"spec":{"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"},{"key":"maintenance","effect":"NoExecute"}]}}' >/dev/null
api $JSON /api/v1/nodes/node-a/status -X PATCH -H 'Content-Type: application/merge-patch+json' \
  -d '{"status":{"capacity":{"cpu":"16","memory":"64Gi","pods":"110","nvidia.com/gpu":"8"},"allocatable":{"cpu":"15500m","memory":"62Gi","pods":"110","nvidia.com/gpu":"8"}}}' >/dev/null
api $JSON /api/v1/nodes/node-b/status -X PATCH -H 'Content-Type: application/merge-patch+json' \
  -d '{"status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"20"}}}' >/dev/null

# capture DIR PATH NAME: the object at PATH as DIR/NAME.json and DIR/NAME.pb, at one version.
capture() {
  local json pb
  json=$(api $JSON "$2")
  api $PROTO "$2" >"$1/$3.pb"
  printf '%s\n' "$json" >"$1/$3.json"
  local rv
  rv=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
  # The protobuf body holds the same resourceVersion string.
  grep -qaF "$rv" "$1/$3.pb" || { echo "capture: $3 changed between the two reads" >&2; exit 1; }
}
for p in capture/multi capture/gated capture/bound capture/unschedulable capture/terminating \
  default/plain; do
  capture "$OUT/pods" "/api/v1/namespaces/${p%/*}/pods/${p#*/}" "${p#*/}"
done
for n in node-a node-b; do capture "$OUT/nodes" "/api/v1/nodes/$n" "$n"; done
# A LIST page of two pods, with a continue token.
api $JSON "/api/v1/namespaces/capture/pods?limit=2" >"$OUT/list-pods-limit2.json"
api $PROTO "/api/v1/namespaces/capture/pods?limit=2" >"$OUT/list-pods-limit2.pb"

# A protobuf watch of the namespace's pods from now: ADDED, MODIFIED, DELETED.
RV=$(api $JSON "/api/v1/namespaces/capture/pods?limit=1" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
api $PROTO "/api/v1/namespaces/capture/pods?watch=1&resourceVersion=$RV&allowWatchBookmarks=true&timeoutSeconds=6" \
  -N -D "$OUT/watch-pods.headers.txt" -o "$OUT/watch-pods.pb" &
WATCH=$!
sleep 1
"${KUBECTL[@]}" create -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: watched, namespace: capture, labels: {step: "1"}}
spec:
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: 300m}}}
EOF
"${KUBECTL[@]}" label pod -n capture watched step=2 --overwrite >/dev/null
"${KUBECTL[@]}" delete pod -n capture watched --grace-period=0 --force >/dev/null 2>&1
wait "$WATCH" || true

# A 404 answered in protobuf.
api $PROTO /api/v1/namespaces/capture/pods/missing -D "$OUT/get-missing-pod-404.headers.txt" \
  -o "$OUT/get-missing-pod-404.pb" || true
# A watch from a resourceVersion older than the watch cache holds: one ERROR (410 Expired). On a
# fresh cluster the pods' watch cache starts near resourceVersion 1 and replays from it; after a
# restart it starts at the current one (tests/fixtures/kube-apiserver/README.md, captures 71, 75).
"$SHARED/down.sh" >/dev/null
"$SHARED/up.sh" >/dev/null
stop_scheduler
api $PROTO "/api/v1/namespaces/capture/pods?watch=1&resourceVersion=1&timeoutSeconds=3" \
  -N -D "$OUT/watch-too-old.headers.txt" -o "$OUT/watch-too-old.pb" || true
# Headers carry dates and audit ids: keep the status line and the content type only.
for h in "$OUT"/*.headers.txt; do
  grep -aiE '^(HTTP/|content-type:)' "$h" | tr -d '\r' >"$h.tmp" && mv "$h.tmp" "$h"
done
ls -l "$OUT" "$OUT/pods" "$OUT/nodes"
