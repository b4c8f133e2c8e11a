#!/usr/bin/env bash
# A throwaway Kubernetes control plane on 127.0.0.1 for tests and benchmarks: etcd,
# kube-apiserver and kube-scheduler, nothing else (no kubelet, no controller-manager). Optional:
# when the binaries are missing, `check` says why and exits 77, and the tests that need it skip.
# The C++ tests drive it through tests/support/real_control_plane.h; docs/architecture.md
# ("Tests") explains both.
#
# Usage: scripts/control-plane.sh COMMAND        (the state folder is $CONTROL_PLANE_DIR)
#   check            print the binaries that would run; exit 77 with the reason when one is missing
#   up               start etcd and kube-apiserver on free ports; write the kubeconfigs
#   scheduler        start kube-scheduler, or restart it (nothing else is touched)
#   stop-scheduler   stop kube-scheduler by PID (etcd and kube-apiserver keep running)
#   kill-apiserver   SIGKILL kube-apiserver (etcd and its data stay)
#   start-apiserver  start kube-apiserver again, on the same port and the same etcd data
#   down             stop everything this folder started, by PID; the folder stays
#   env              print the state (ports, paths) as NAME=value lines
#
# Binaries: $KUBE_BIN_DIR holds kube-apiserver, kube-scheduler and kubectl, each plain or .gz
# (as controller-runtime's envtest takes KUBEBUILDER_ASSETS). Without it, the fallback is
# ../shared/kube/bin beside the repository (or beside the main checkout of a git worktree),
# when present. etcd comes from PATH (Debian's
# etcd-server package) or $ETCD_BIN. Gzipped binaries are unpacked once into $KUBE_BIN_CACHE
# (default $CONTROL_PLANE_DIR/bin).
#
# Settings read by `up` (kept for later commands in $CONTROL_PLANE_DIR/state.env):
#   FEATURE_GATES      e.g. PodSchedulingReadiness=true, for kube-apiserver and kube-scheduler
#   APISERVER_V        kube-apiserver's klog verbosity (default 1)
#   OWNER_PID          when set, a watchdog runs `down` as soon as that process is gone, so a
#                      crashed or killed test leaves nothing running
# Settings read by `scheduler`:
#   EXTENDER_URL       the extender's urlPrefix; empty: a configuration without extenders
#   FILTER_VERB [filter] PRIORITIZE_VERB [prioritize] PREEMPT_VERB [preempt] BIND_VERB [bind]
#                      (an empty value leaves that verb out)
#   EXTENDER_WEIGHT [1] HTTP_TIMEOUT [5s] NODE_CACHE_CAPABLE [true] ENABLE_HTTPS [false]
#   IGNORABLE [false] SCHEDULER_NAME [default-scheduler] SCHED_V [2]
#   SCHED_QPS, SCHED_BURST  clientConnection qps and burst of kube-scheduler's API client
#                      (empty: kube-scheduler's defaults, 50 and 100)
#   SCHED_CONFIG       a KubeSchedulerConfiguration to use as it is, instead of the generated one
#
# Facts that shape it (Kubernetes 1.26):
#   * TLS on 127.0.0.1 with a CA made here; clients authenticate with static tokens (admin in
#     system:masters, kube-scheduler as system:kube-scheduler); authorization is RBAC, so
#     ServiceAccount tokens (`kubectl create token`) get exactly their roles.
#   * Nodes are API objects only: their status must be patched in, and the not-ready taint that
#     admission puts on a new Node removed by hand (real_control_plane.h does both).
#   * Without controllers, namespaces never finish deleting and nothing re-creates pods: make a
#     new control plane rather than cleaning one.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cmd=${1:-}
dir=${CONTROL_PLANE_DIR:-}

die() { echo "control-plane: $*" >&2; exit 1; }
unavailable() { echo "$*"; exit 77; }

# ---- binaries ---------------------------------------------------------------------------------

# Sets bin_source (the folder the binaries come from) or explains, through `unavailable`, why
# there is none.
find_bin_source() {
  local d common
  if [[ -n ${KUBE_BIN_DIR:-} ]]; then
    d=$KUBE_BIN_DIR
  elif [[ -d $repo/../shared/kube/bin ]]; then
    d=$(cd "$repo/../shared/kube/bin" && pwd)
  elif [[ -e $repo/.git ]] &&
    common=$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) &&
    [[ -d $common/../../shared/kube/bin ]]; then
    # A git worktree: beside its main checkout.
    d=$(cd "$common/../../shared/kube/bin" && pwd)
  else
    unavailable "no Kubernetes binaries: set KUBE_BIN_DIR to a folder with kube-apiserver, kube-scheduler and kubectl (plain or .gz)"
  fi
  local b
  for b in kube-apiserver kube-scheduler kubectl; do
    [[ -x $d/$b || -f $d/$b.gz ]] || unavailable "no $b (or $b.gz) in $d"
  done
  bin_source=$d
}

find_etcd() {
  etcd_bin=${ETCD_BIN:-$(command -v etcd || true)}
  [[ -n $etcd_bin && -x $etcd_bin ]] ||
    unavailable "no etcd on PATH (Debian: apt-get install etcd-server) and ETCD_BIN not set"
  local tool
  for tool in openssl curl python3; do
    command -v "$tool" >/dev/null || unavailable "no $tool on PATH"
  done
}

# The runnable path of binary $1: the plain file, or the .gz unpacked into the cache (again
# when the .gz is newer). The unpacked file appears whole or not at all (rename).
binary() {
  local name=$1
  if [[ -x $bin_source/$name ]]; then echo "$bin_source/$name"; return; fi
  local cache=${KUBE_BIN_CACHE:-$dir/bin}
  mkdir -p "$cache"
  if [[ ! -x $cache/$name || $bin_source/$name.gz -nt $cache/$name ]]; then
    gzip -dc "$bin_source/$name.gz" > "$cache/$name.$$"
    chmod +x "$cache/$name.$$"
    mv -f "$cache/$name.$$" "$cache/$name"
  fi
  echo "$cache/$name"
}

# ---- processes ----------------------------------------------------------------------------------

# True while process $1 exists and has not exited (a zombie has exited).
running() {
  [[ -r /proc/$1/status ]] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# True when the PID file $1 names a running process whose command line contains $2.
alive() {
  local pidfile=$1 needle=$2 pid
  [[ -f $pidfile ]] || return 1
  pid=$(<"$pidfile")
  running "$pid" && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$needle"
}

# Stops the process of PID file $1 (checked against $2) with SIGTERM, then SIGKILL after
# $3 seconds (default 15); removes the file.
stop() {
  local pidfile=$1 needle=$2 grace=${3:-15} pid i
  if alive "$pidfile" "$needle"; then
    pid=$(<"$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
      running "$pid" || break
      sleep 0.1
    done
    if running "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do running "$pid" || break; sleep 0.1; done
    fi
  fi
  rm -f "$pidfile"
}

# Starts "$@" in its own session (no terminal signals), output to log $2, PID into file $1.
launch() {
  local pidfile=$1 log=$2
  shift 2
  setsid "$@" < /dev/null >> "$log" 2>&1 &
  echo $! > "$pidfile"
}

# Waits up to $2 seconds for URL $1 to answer 200 (extra curl arguments after); on timeout,
# reports the tail of log $3.
wait_ready() {
  local url=$1 seconds=$2 log=$3 pidfile=$4
  shift 4
  local i
  for ((i = 0; i < seconds * 4; i++)); do
    if curl -fsS -o /dev/null --max-time 2 "$@" "$url" 2>/dev/null; then return 0; fi
    if [[ -f $pidfile ]] && ! running "$(<"$pidfile")"; then
      echo "control-plane: $(basename "$pidfile" .pid) exited; end of $log:" >&2
      tail -n 20 "$log" >&2
      return 1
    fi
    sleep 0.25
  done
  echo "control-plane: $url not ready after $seconds s; end of $log:" >&2
  tail -n 20 "$log" >&2
  return 1
}

# N free TCP ports on 127.0.0.1, held open together while chosen so that they differ.
free_ports() {
  python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# ---- state ------------------------------------------------------------------------------------

need_dir() {
  [[ -n $dir ]] || die "set CONTROL_PLANE_DIR to a folder for this control plane's files"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  pki=$dir/pki etc=$dir/etc pids=$dir/pids logs=$dir/logs
  mkdir -p "$pki" "$etc" "$pids" "$logs"
}

load_state() {
  [[ -f $dir/state.env ]] || die "$dir has no control plane (run up first)"
  # shellcheck disable=SC1091
  source "$dir/state.env"
}

write_state() {
  {
    echo "APISERVER_PORT=$APISERVER_PORT"
    echo "ETCD_PORT=$ETCD_PORT"
    echo "ETCD_PEER_PORT=$ETCD_PEER_PORT"
    echo "SCHED_PORT=$SCHED_PORT"
    echo "FEATURE_GATES='$FEATURE_GATES'"
    echo "APISERVER_V=$APISERVER_V"
    echo "SERVER=https://127.0.0.1:$APISERVER_PORT"
    echo "ADMIN_KUBECONFIG=$etc/admin.kubeconfig"
    echo "SCHEDULER_KUBECONFIG=$etc/scheduler.kubeconfig"
    echo "CA_FILE=$pki/ca.crt"
    echo "KUBE_APISERVER=$KUBE_APISERVER"
    echo "KUBE_SCHEDULER=$KUBE_SCHEDULER"
    echo "KUBECTL=$KUBECTL"
    echo "ETCD=$ETCD"
    echo "APISERVER_LOG=$logs/kube-apiserver.log"
    echo "SCHEDULER_LOG=$logs/kube-scheduler.log"
    echo "ETCD_LOG=$logs/etcd.log"
  } > "$dir/state.env.tmp"
  mv -f "$dir/state.env.tmp" "$dir/state.env"
}

# A CA, kube-apiserver's serving certificate (127.0.0.1, localhost) and the ServiceAccount
# signing key pair. EC P-256 keys: quick to make.
make_pki() {
  [[ -f $pki/apiserver.crt ]] && return
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256)
  openssl req -x509 "${ec[@]}" -days 30 -keyout "$pki/ca.key" -out "$pki/ca.crt" \
    -subj "/CN=capacity-extender-test-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req "${ec[@]}" -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" \
    -subj "/CN=kube-apiserver" 2>/dev/null
  printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc" \
    "extendedKeyUsage=serverAuth" "keyUsage=critical,digitalSignature,keyEncipherment" \
    > "$pki/apiserver.ext"
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -CAcreateserial -days 30 -sha256 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" \
    2>/dev/null
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/sa.key" 2>/dev/null
  openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

# Static tokens for the administrator and kube-scheduler, and a kubeconfig for each.
make_credentials() {
  if [[ ! -f $etc/tokens.csv ]]; then
    (
      umask 077
      echo "$(openssl rand -hex 24),admin,uid-admin,\"system:masters\"" > "$etc/tokens.csv"
      echo "$(openssl rand -hex 24),system:kube-scheduler,uid-kube-scheduler" >> "$etc/tokens.csv"
    )
  fi
  local user token
  for user in admin scheduler; do
    if [[ $user == admin ]]; then
      token=$(awk -F, '$2 == "admin" { print $1 }' "$etc/tokens.csv")
    else
      token=$(awk -F, '$2 == "system:kube-scheduler" { print $1 }' "$etc/tokens.csv")
    fi
    (
      umask 077
      cat > "$etc/$user.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $user
  user:
    token: $token
contexts:
- name: $user
  context: {cluster: local, user: $user}
current-context: $user
EOF
    )
  done
}

start_etcd() {
  mkdir -p "$dir/etcd-data"
  launch "$pids/etcd.pid" "$logs/etcd.log" "$ETCD" --name local --data-dir "$dir/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new
  wait_ready "http://127.0.0.1:$ETCD_PORT/health" 30 "$logs/etcd.log" "$pids/etcd.pid"
}

start_apiserver() {
  local gates=()
  [[ -n $FEATURE_GATES ]] && gates=(--feature-gates="$FEATURE_GATES")
  launch "$pids/kube-apiserver.pid" "$logs/kube-apiserver.log" "$KUBE_APISERVER" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --token-auth-file="$etc/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range=10.0.0.0/24 --endpoint-reconciler-type=none \
    --cert-dir="$dir/apiserver-certs" --profiling=false --v="$APISERVER_V" "${gates[@]}"
  wait_ready "https://127.0.0.1:$APISERVER_PORT/readyz" 180 "$logs/kube-apiserver.log" \
    "$pids/kube-apiserver.pid" --cacert "$pki/ca.crt"
}

# The generated KubeSchedulerConfiguration (see the settings at the top).
scheduler_config() {
  cat <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $etc/scheduler.kubeconfig
${SCHED_QPS:+  qps: $SCHED_QPS
}${SCHED_BURST:+  burst: $SCHED_BURST
}leaderElection:
  leaderElect: false
profiles:
- schedulerName: ${SCHEDULER_NAME:-default-scheduler}
EOF
  [[ -n ${EXTENDER_URL:-} ]] || return 0
  echo "extenders:"
  echo "- urlPrefix: \"$EXTENDER_URL\""
  local verb
  for verb in filter:FILTER_VERB:filter prioritize:PRIORITIZE_VERB:prioritize \
    preempt:PREEMPT_VERB:preempt bind:BIND_VERB:bind; do
    IFS=: read -r key var default <<< "$verb"
    local value=${!var-$default}
    [[ -n $value ]] && echo "  ${key}Verb: \"$value\""
  done
  echo "  weight: ${EXTENDER_WEIGHT:-1}"
  echo "  httpTimeout: ${HTTP_TIMEOUT:-5s}"
  echo "  nodeCacheCapable: ${NODE_CACHE_CAPABLE:-true}"
  echo "  enableHTTPS: ${ENABLE_HTTPS:-false}"
  echo "  ignorable: ${IGNORABLE:-false}"
}

start_scheduler() {
  local config=${SCHED_CONFIG:-}
  if [[ -z $config ]]; then
    config=$etc/kube-scheduler.yaml
    scheduler_config > "$config"
  fi
  local gates=()
  [[ -n $FEATURE_GATES ]] && gates=(--feature-gates="$FEATURE_GATES")
  # Each start logs to its own file; kube-scheduler.log links to the newest.
  local log
  log=$logs/kube-scheduler-$(date +%H%M%S-%N).log
  launch "$pids/kube-scheduler.pid" "$log" "$KUBE_SCHEDULER" --config="$config" \
    --bind-address=127.0.0.1 --secure-port="$SCHED_PORT" --cert-dir="$dir/scheduler-certs" \
    --authentication-kubeconfig="$etc/scheduler.kubeconfig" \
    --authorization-kubeconfig="$etc/scheduler.kubeconfig" \
    --v="${SCHED_V:-2}" "${gates[@]}"
  ln -sfn "$(basename "$log")" "$logs/kube-scheduler.log"
  wait_ready "https://127.0.0.1:$SCHED_PORT/healthz" 60 "$log" "$pids/kube-scheduler.pid" -k
}

# Runs `down` once process $1 is gone. Its own session, so it outlives the test process.
start_watchdog() {
  local owner=$1
  # shellcheck disable=SC2016  # $1.. expand in the inner shell
  setsid bash -c '
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    CONTROL_PLANE_DIR="$2" "$3" down --from-watchdog >> "$2/logs/watchdog.log" 2>&1
  ' watchdog "$owner" "$dir" "$here/control-plane.sh" < /dev/null > /dev/null 2>&1 &
  echo $! > "$pids/watchdog.pid"
}

stop_all() {
  stop "$pids/kube-scheduler.pid" "$KUBE_SCHEDULER"
  stop "$pids/kube-apiserver.pid" "$KUBE_APISERVER"
  stop "$pids/etcd.pid" "$ETCD"
}

# ---- commands ---------------------------------------------------------------------------------

case $cmd in
  check)
    find_bin_source
    find_etcd
    echo "kube binaries: $bin_source"
    echo "etcd: $etcd_bin"
    ;;
  up)
    need_dir
    find_bin_source
    find_etcd
    KUBE_APISERVER=$(binary kube-apiserver)
    KUBE_SCHEDULER=$(binary kube-scheduler)
    KUBECTL=$(binary kubectl)
    ETCD=$etcd_bin
    FEATURE_GATES=${FEATURE_GATES:-}
    APISERVER_V=${APISERVER_V:-1}
    make_pki
    # Another process may take a port between the choice and the bind: try new ports then.
    for attempt in 1 2 3; do
      read -r APISERVER_PORT ETCD_PORT ETCD_PEER_PORT SCHED_PORT <<< "$(free_ports 4)"
      write_state
      make_credentials
      if start_etcd && start_apiserver; then break; fi
      stop_all
      rm -rf "$dir/etcd-data"
      [[ $attempt == 3 ]] && die "could not start etcd and kube-apiserver (logs in $logs)"
      echo "control-plane: retrying on other ports" >&2
    done
    if [[ -n ${OWNER_PID:-} ]]; then start_watchdog "$OWNER_PID"; fi
    echo "kube-apiserver https://127.0.0.1:$APISERVER_PORT ready; KUBECONFIG=$etc/admin.kubeconfig"
    ;;
  scheduler)
    need_dir
    load_state
    stop "$pids/kube-scheduler.pid" "$KUBE_SCHEDULER"
    start_scheduler
    echo "kube-scheduler ready; log $logs/kube-scheduler.log"
    ;;
  stop-scheduler)
    need_dir
    load_state
    stop "$pids/kube-scheduler.pid" "$KUBE_SCHEDULER"
    ;;
  kill-apiserver)
    need_dir
    load_state
    if alive "$pids/kube-apiserver.pid" "$KUBE_APISERVER"; then
      pid=$(<"$pids/kube-apiserver.pid")
      kill -KILL "$pid"
      for ((i = 0; i < 100; i++)); do running "$pid" || break; sleep 0.1; done
    fi
    rm -f "$pids/kube-apiserver.pid"
    ;;
  start-apiserver)
    need_dir
    load_state
    alive "$pids/kube-apiserver.pid" "$KUBE_APISERVER" && die "kube-apiserver is running"
    start_apiserver
    ;;
  down)
    need_dir
    [[ -f $dir/state.env ]] || exit 0
    load_state
    stop_all
    if [[ ${2:-} != --from-watchdog ]]; then stop "$pids/watchdog.pid" "watchdog" 1; fi
    ;;
  env)
    need_dir
    load_state
    cat "$dir/state.env"
    ;;
  -h | --help | help)
    awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
    ;;
  *)
    echo "usage: scripts/control-plane.sh check|up|scheduler|stop-scheduler|kill-apiserver|start-apiserver|down|env" >&2
    exit 2
    ;;
esac
