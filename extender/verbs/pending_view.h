// GET /pending: the pending pods of quota namespaces with the reclaim controller's current
// verdict, and its last reclaims (README "Endpoints of serve" documents the JSON).
// Thread-safety: pure; the board is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extender/http/message.h"
#include "extender/reclaim/pending_board.h"

namespace capext {

// `ready`: what /readyz says (the cluster cache synced, nothing out of sync beyond the bound);
// `now_ms`: Unix milliseconds (waiting times are computed against it). `gated`: gate mode's
// gated pods (AdmissionLoop::Gated(), verdict Gated), listed with the board's pending pods.
http::Response PendingView(const PendingBoard& board, bool ready, int64_t now_ms,
                           const std::vector<PendingPodRecord>& gated = {});

// Unix milliseconds as RFC 3339 UTC with milliseconds: "2026-01-01T00:00:00.000Z".
std::string TimestampText(int64_t unix_ms);

}  // namespace capext
