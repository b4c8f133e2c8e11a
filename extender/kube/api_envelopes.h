// The API server's JSON envelopes around objects: a list page, a watch event, a Status error.
// Objects inside them are handed on as their exact JSON text and never decoded here (the
// decoder into our model lives elsewhere).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace capext::kube {

struct ListPage {
  std::string kind;              // "PodList"
  std::string api_version;       // "v1"
  std::string resource_version;  // metadata.resourceVersion: the list's point in time
  std::string continue_token;    // metadata.continue; empty on the last page
  // Each item's JSON text. Built-in types come without kind/apiVersion in a list (capture 21):
  // those two members are then put first into the item, taken from the list's kind minus "List"
  // and its apiVersion, so every object looks the same as in a watch event.
  std::vector<std::string> items;
};

// Parses one LIST response body. Errors say what was malformed and where (byte offset).
Status ParseListPage(std::string_view body, ListPage* out);

struct WatchEventEnvelope {
  std::string type;              // "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", as sent
  std::string_view object;       // the object's JSON text: a view into the parsed line
  std::string resource_version;  // object.metadata.resourceVersion; empty if absent (ERROR)
};

// Parses one line of a watch stream (one event). `out->object` points into `line`. The tokens
// stay offered for reuse on this thread (json::JsonPullReader::OfferForReuse) so that decoding
// the object does not parse it again: call json::JsonPullReader::ForgetSource() before `line`'s
// memory changes.
Status ParseWatchEvent(std::string_view line, WatchEventEnvelope* out);

// A meta/v1 Status, the body of every API error (and of binding/eviction successes).
struct ApiStatus {
  int code = 0;         // HTTP code it stands for
  std::string status;   // "Success" or "Failure"
  std::string reason;   // "Conflict", "NotFound", "TooManyRequests", "Expired", ...
  std::string message;  // human-readable
  std::vector<std::pair<std::string, std::string>> causes;  // details.causes: (reason, message)
  int retry_after_seconds = 0;                              // details.retryAfterSeconds
};

// Returns true and fills *out when `body` is a Status (kind "Status") in JSON, or in protobuf
// ("k8s\0" + runtime.Unknown of kind Status around a meta/v1 Status message, told apart by the
// kProtobufMagic prefix, extender/kube/protobuf_envelopes.h): the body of a non-200 answer or an
// ERROR watch event in either encoding. False for anything else (plain text "404 page not
// found", other objects, malformed JSON or protobuf).
bool ParseApiStatus(std::string_view body, ApiStatus* out);

}  // namespace capext::kube
