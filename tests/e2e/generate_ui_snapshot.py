#!/usr/bin/env python3
"""generate_ui_snapshot.py -- writes a large cluster snapshot for `capacity-extender serve
--snapshot FILE` (a JSON `kind: List`, as `kubectl get ... -o json` prints it), used to render
/ui and time /pending and /ui at scale (tests/e2e/ui_page_chromium.sh).

  generate_ui_snapshot.py --quotas 300 --pending 5000 [--nodes 150] [--seed 1] --out FILE

Deterministic for a seed. Namespaces team-000... each have an ElasticQuota on cpu (a third also
on memory, one in ten on nvidia.com/gpu) with min <= max; every node (64 cpu, 256Gi, some with
8 GPUs) is filled to about 80% with running pods of the quotas, about half of the quotas
borrowing; the pending pods (created over the last six hours) are of every kind the reclaim
controller judges: over their quota's max, behind the sum of mins, fitting nowhere, fitting now.
"""

import argparse
import datetime
import json
import random


def quantity_cpu(milli):
    return "%d" % (milli // 1000) if milli % 1000 == 0 else "%dm" % milli


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quotas", type=int, default=300)
    parser.add_argument("--pending", type=int, default=5000)
    parser.add_argument("--nodes", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)

    def stamp(seconds_ago):
        return (now - datetime.timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")

    items = []
    nodes = []
    for i in range(args.nodes):
        name = "node-%03d" % i
        gpus = 8 if i % 5 == 0 else 0
        alloc = {"cpu": "64", "memory": "256Gi", "pods": "110"}
        if gpus:
            alloc["nvidia.com/gpu"] = str(gpus)
        nodes.append({"name": name, "cpu": 64000, "gpu": gpus, "free_cpu": 64000 * 8 // 10,
                      "free_gpu": gpus})
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                      "spec": {}, "status": {"allocatable": alloc, "capacity": alloc,
                                             "conditions": [{"type": "Ready", "status": "True"}]}})

    total_cpu = args.nodes * 64000
    quotas = []
    for q in range(args.quotas):
        ns = "team-%03d" % q
        min_cpu = rnd.randint(4, 20) * 1000 * total_cpu // (args.quotas * 12 * 1000)
        min_cpu = max(1000, min_cpu - min_cpu % 1000)
        max_cpu = min_cpu * rnd.choice([1, 2, 2, 3])
        spec_min, spec_max = {"cpu": quantity_cpu(min_cpu)}, {"cpu": quantity_cpu(max_cpu)}
        if q % 3 == 0:
            spec_min["memory"] = "%dGi" % (min_cpu // 250)
            spec_max["memory"] = "%dGi" % (max_cpu // 250)
        if q % 10 == 0:
            spec_min["nvidia.com/gpu"] = "2"
            spec_max["nvidia.com/gpu"] = "8"
        quotas.append({"ns": ns, "min": min_cpu, "max": max_cpu, "used": 0})
        items.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                      "metadata": {"name": ns, "namespace": ns},
                      "spec": {"min": spec_min, "max": spec_max}})

    def pod(ns, name, cpu, node=None, created=60, priority=0, gpu=0):
        requests = {"cpu": quantity_cpu(cpu), "memory": "%dMi" % (cpu // 4)}
        if gpu:
            requests["nvidia.com/gpu"] = str(gpu)
        obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": ns, "uid": "uid-%s-%s" % (ns, name),
                            "creationTimestamp": stamp(created)},
               "spec": {"schedulerName": "capacity-scheduler", "priority": priority,
                        "containers": [{"name": "main", "image": "registry.local/app:1",
                                        "resources": {"requests": requests}}]},
               "status": {"phase": "Pending"}}
        if node:
            obj["spec"]["nodeName"] = node
            obj["status"] = {"phase": "Running", "startTime": stamp(created - 5)}
        else:
            obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False",
                                            "reason": "Unschedulable"}]
        return obj

    # Running pods: fill the nodes to ~80% with the quotas' pods, about half of them borrowing.
    serial = 0
    order = list(range(args.quotas))
    rnd.shuffle(order)
    for q in order:
        quota = quotas[q]
        target = quota["min"] * rnd.choice([0.5, 0.9, 1.2, 1.6]) if quota["max"] > quota["min"] \
            else quota["min"] * rnd.choice([0.5, 0.9])
        target = min(target, quota["max"])
        while quota["used"] + 1000 <= target:
            cpu = min(rnd.choice([1000, 2000, 4000]), int(target - quota["used"]))
            cpu -= cpu % 500
            node = next((n for n in rnd.sample(nodes, len(nodes)) if n["free_cpu"] >= cpu), None)
            if node is None or cpu <= 0:
                break
            node["free_cpu"] -= cpu
            quota["used"] += cpu
            serial += 1
            items.append(pod(quota["ns"], "run-%05d" % serial, cpu, node["name"],
                             created=rnd.randint(3600, 86400), priority=rnd.choice([0, 0, 100])))

    # Pending pods of every kind.
    for i in range(args.pending):
        quota = quotas[rnd.randrange(args.quotas)]
        kind = rnd.random()
        if kind < 0.5:  # over its max
            cpu = max(1000, quota["max"] - quota["used"] + rnd.randint(1, 8) * 1000)
        elif kind < 0.8:  # larger than any node's free room
            cpu = rnd.choice([16000, 24000, 32000])
        else:  # small: may fit
            cpu = rnd.choice([500, 1000, 2000])
        cpu -= cpu % 500
        items.append(pod(quota["ns"], "wait-%05d" % i, cpu, None,
                         created=rnd.randint(10, 6 * 3600), priority=rnd.choice([0, 0, 0, 100])))

    with open(args.out, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f, separators=(",", ":"))
    print("wrote %s: %d nodes, %d quotas, %d running pods, %d pending pods" % (
        args.out, args.nodes, args.quotas, serial, args.pending))


if __name__ == "__main__":
    main()
