// How far a quota change reaches in the quota tree (docs/quota-hierarchy.md), for the reclaim
// loop's wake rules: the namespaces whose pending pods' quota verdicts a change of the used, the
// spec or the nominations of one namespace's quota can move.
//
// Admission checks a pod at its quota and at every ancestor (quota_admission.h): a change of used
// in namespace n moves the used of n's quota and of every ancestor of it, so it can decide the
// pods of every quota sharing one of those ancestors; a change of a quota's min or max moves its
// own node and (through the own node's min) its parent's implicit child; the victim rule reads
// the mins of both sides up to their lowest common ancestor. The exact reach (the pods whose path
// crosses a node that changed) would need each pod's blocking level; the rule kept is cheaper and
// conservative: the whole root tree of n. With flat quotas every quota is its own root tree, so
// this is n alone, as before hierarchy.
//
// A change of the tree's shape (a quota added or removed, a parent annotation changed) moves
// namespaces from one tree to another; the caller handles it on its own (the reclaim loop wakes
// every quota-subscribed pod then), since the tree before the change is gone.
// Thread-safety: a pure function over a ClusterState the caller keeps still (under its lock).
#pragma once

#include <set>
#include <string>

#include "core/cluster_state.h"

namespace capext {

// The namespaces of every root tree holding a quota of one of `namespaces` (their own included),
// plus the namespaces of `namespaces` that have no quota (so that the caller's lookups stay
// harmless). With flat quotas: `namespaces` itself.
std::set<std::string> NamespacesOfTheirTrees(const ClusterState& state,
                                             const std::set<std::string>& namespaces);

}  // namespace capext
