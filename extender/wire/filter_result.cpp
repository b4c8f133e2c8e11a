#include "extender/wire/filter_result.h"

#include "extender/wire/json_out.h"

namespace capext {

void FilterVerdicts::Fail(std::size_t i, const Status& verdict) {
  if (reason_.empty()) reason_.resize(code_.size());
  code_[i] = verdict.code();
  std::string json = RenderString(verdict.message());
  for (std::size_t k = 0; k < rendered_.size(); ++k) {
    if (rendered_[k] == json) {
      reason_[i] = static_cast<uint32_t>(k);
      return;
    }
  }
  reason_[i] = static_cast<uint32_t>(rendered_.size());
  rendered_.push_back(std::move(json));
}

void FilterVerdicts::FailAll(const Status& verdict) {
  rendered_.assign(1, RenderString(verdict.message()));
  code_.assign(code_.size(), verdict.code());
  reason_.assign(code_.size(), 0);
}

std::size_t FilterVerdicts::passed() const {
  std::size_t n = 0;
  for (StatusCode c : code_)
    n += c == StatusCode::kOk;
  return n;
}

namespace {

void WriteReasonMap(JsonOut& w, const char* key, const std::vector<std::string_view>& names,
                    const std::vector<StatusCode>& codes, const std::vector<uint32_t>& reasons,
                    const std::vector<std::string>& rendered, StatusCode code) {
  w.Key(key);
  w.StartObject();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (codes[i] != code) continue;
    w.KeyText(names[i]);
    w.RenderedString(rendered[reasons[i]]);
  }
  w.EndObject();
}

}  // namespace

StatusOr<std::string> FilterVerdicts::Encode(const ExtenderArgs& args) const {
  JsonOut w;
  // The answer's size, nearly: every name once, plus a reason for the failed ones.
  std::size_t estimate = 256;
  for (std::size_t i = 0; i < args.node_names.size(); ++i) {
    estimate += args.node_names[i].size() + 4;
    if (!Passed(i)) estimate += rendered_[reason_[i]].size() + 1;
  }
  w.Reserve(estimate);
  w.StartObject();
  if (args.node_names_mode || args.node_items == nullptr) {
    w.Key("NodeNames");
    w.TextArray(args.node_names, [&](std::size_t i) { return Passed(i); });
    w.Key("Nodes");
    w.Null();
  } else {
    w.Key("NodeNames");
    w.Null();
    w.Key("Nodes");
    w.StartObject();
    w.Key("metadata");
    w.StartObject();
    w.EndObject();
    w.Key("items");
    w.StartArray();
    for (std::size_t i = 0; i < args.node_names.size(); ++i) {
      if (!Passed(i)) continue;
      if (!WriteBounded((*args.node_items)[static_cast<rapidjson::SizeType>(i)], &w)) {
        return Status::Invalid("Nodes.items nest too deeply");
      }
    }
    w.EndArray();
    w.EndObject();
  }
  WriteReasonMap(w, "FailedNodes", args.node_names, code_, reason_, rendered_,
                 StatusCode::kUnschedulable);
  WriteReasonMap(w, "FailedAndUnresolvableNodes", args.node_names, code_, reason_, rendered_,
                 StatusCode::kUnschedulableAndUnresolvable);
  w.Key("Error");
  w.String("");
  w.EndObject();
  return w.Take();
}

std::string EncodeFilterNotReady(std::string_view reason) {
  JsonOut w;
  w.StartObject();
  w.Key("NodeNames"), w.Null();
  w.Key("Nodes"), w.Null();
  w.Key("FailedNodes"), w.StartObject(), w.EndObject();
  w.Key("FailedAndUnresolvableNodes"), w.StartObject(), w.EndObject();
  w.Key("Error"), w.String("capacity-extender: " + std::string(reason));
  w.EndObject();
  return w.Take();
}

}  // namespace capext
