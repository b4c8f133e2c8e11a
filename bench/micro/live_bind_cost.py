#!/usr/bin/env python3
"""Live-mode /bind cost of the real capacity-extender binary against the API-server TEST DOUBLE.

Starts tests/apiserver_double/apiserver_double.py (127.0.0.1, free port), loads one large node, an
ElasticQuota and N pending pods, starts `capacity-extender serve --kubeconfig ...` on a free
port, waits for /readyz, then sends N /bind requests over one keep-alive connection (as
kube-scheduler's extender client does) and prints, for the extender process only:
  CPU while idle for 3 s (synced, no requests), CPU (utime+stime from /proc/PID/stat) per bind, voluntary/non-voluntary context switches per
  bind (summed over /proc/PID/task/*/status: threads that exited meanwhile are not counted), its
  thread count before/after, and the distinct threads seen while
  binding (/proc/PID/task sampled every 0.5 ms: threads created per N binds, a lower bound).
Both processes are stopped by PID at the end.

Usage: live_bind_cost.py BINARY [--binds N] [--perf FILE]   (--perf: `perf record -g` of the
extender while it binds, into FILE)
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKEN = "bench-token"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def api(base, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + TOKEN,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"{}")


def proc_stat(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime, seconds
    # Context switches of the live threads (a thread that exited takes its counts with it).
    voluntary = nonvoluntary = threads = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            for line in open("/proc/%d/task/%s/status" % (pid, tid)):
                k, _, v = line.partition(":")
                if k == "voluntary_ctxt_switches":
                    voluntary += int(v)
                elif k == "nonvoluntary_ctxt_switches":
                    nonvoluntary += int(v)
            threads += 1
        except OSError:
            pass
    return cpu, voluntary, nonvoluntary, threads


def main():
    binary = sys.argv[1]
    binds = int(sys.argv[sys.argv.index("--binds") + 1]) if "--binds" in sys.argv else 1000
    work = tempfile.mkdtemp(prefix="live_bind_cost_")
    port_file = os.path.join(work, "port")
    double = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests/apiserver_double/apiserver_double.py"),
                               "--port", "0", "--port-file", port_file, "--token", TOKEN],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "double.log"), "w"))
    extender = None
    try:
        for _ in range(1500):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.01)
        base = "http://127.0.0.1:" + open(port_file).read().strip()
        api(base, "POST", "/api/v1/nodes", {"metadata": {"name": "n1"}, "status": {
            "allocatable": {"cpu": "10000", "memory": "100Ti", "pods": "100000"}}})
        api(base, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/bench/elasticquotas",
            {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
             "metadata": {"name": "bench", "namespace": "bench"},
             "spec": {"min": {"cpu": "1000"}, "max": {"cpu": "1000"}}})
        api(base, "POST", "/_double/churn", {"resource": "pods", "namespace": "bench",
                                             "prefix": "p-", "count": binds})
        kubeconfig = os.path.join(work, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: d\n  cluster:\n    server: %s\n"
                    "contexts:\n- name: d\n  context:\n    cluster: d\n    user: u\n"
                    "current-context: d\nusers:\n- name: u\n  user:\n    token: %s\n" % (base, TOKEN))
        port = free_port()
        extender = subprocess.Popen([binary, "serve", "--kubeconfig", kubeconfig, "--port", str(port),
                                     "--reclaim", "off"],
                                    stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "extender.log"), "w"))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(600):
            try:
                conn.request("GET", "/readyz")
                r = conn.getresponse()
                r.read()
                if r.status == 200:
                    break
            except OSError:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            time.sleep(0.05)
        pods = api(base, "GET", "/_double/objects?resource=pods")["items"]
        uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods}
        time.sleep(1.0)  # let start-up work settle

        seen = set()
        sampling = [True]

        def sample():
            while sampling[0]:
                try:
                    seen.update(os.listdir("/proc/%d/task" % extender.pid))
                except OSError:
                    pass
                time.sleep(0.0005)

        idle_start = proc_stat(extender.pid)
        time.sleep(3.0)
        idle_end = proc_stat(extender.pid)
        sampler = threading.Thread(target=sample)
        perf = None
        if "--perf" in sys.argv:
            perf = subprocess.Popen(["perf", "record", "-g", "-p", str(extender.pid), "-o",
                                     sys.argv[sys.argv.index("--perf") + 1]],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        before = proc_stat(extender.pid)
        before_tasks = set(os.listdir("/proc/%d/task" % extender.pid))
        sampler.start()
        errors = 0
        started = time.time()
        for i in range(binds):
            name = "p-%d" % i
            body = json.dumps({"PodName": name, "PodNamespace": "bench", "PodUID": uids[name],
                               "Node": "n1"})
            conn.request("POST", "/bind", body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            answer = json.loads(r.read())
            if r.status != 200 or answer.get("Error"):
                errors += 1
        wall = time.time() - started
        time.sleep(0.2)
        after = proc_stat(extender.pid)
        if perf is not None:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=30)
        sampling[0] = False
        sampler.join()
        created = len(seen - before_tasks)
        cpu_ms = (after[0] - before[0]) * 1000.0
        print("binary: %s" % binary)
        print("idle (synced, no requests): %.1f ms CPU per second, %.1f context switches per second" % (
            (idle_end[0] - idle_start[0]) * 1000.0 / 3.0,
            (idle_end[1] + idle_end[2] - idle_start[1] - idle_start[2]) / 3.0))
        print("binds: %d (errors %d) in %.2f s" % (binds, errors, wall))
        print("extender CPU: %.0f ms total, %.3f ms per bind" % (cpu_ms, cpu_ms / binds))
        print("context switches per bind: voluntary %.2f, non-voluntary %.2f" % (
            (after[1] - before[1]) / binds, (after[2] - before[2]) / binds))
        print("threads: %d before, %d after; distinct new threads seen while binding: %d" % (
            before[3], after[3], created))
    finally:
        for p in (extender, double):
            if p is not None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()


if __name__ == "__main__":
    main()
