// DeclaredChanges: what a plugin declares can alter its verdict about a pending pod
// (docs/architecture.md#declared-changes-and-wake-rules), in the vocabulary of the state's change
// journal (core/change_journal.h). The reclaim loop wakes a pending pod on the union of the
// declarations of what its verdict waits on; a change of the pod itself (its kPod entry) always
// wakes it and needs no declaration.
// Thread-safety: constants.
#pragma once

#include <cstdint>

namespace capext {

using DeclaredChanges = uint32_t;

enum DeclaredChange : DeclaredChanges {
  // kUsage, kQuota or kNominations of any namespace of the root quota tree holding the pod's
  // namespace (with flat quotas: its own namespace).
  kChangesInTree = 1u << 0,
  // kUsage, kQuota or kNominations of any quota namespace (sums over the roots, who borrows).
  kChangesInAnyQuota = 1u << 1,
  // kNode of any node (its spec, or anything holding room on it).
  kChangesOnAnyNode = 1u << 2,
  // kNode of the one node the verdict names.
  kChangesOnOneNode = 1u << 3,
  // kPdb of any namespace.
  kChangesToPdbs = 1u << 4,
};

}  // namespace capext
