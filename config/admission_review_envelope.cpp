#include "config/admission_review_envelope.h"

namespace capext {

std::string WriteAdmissionReviewResponse(
    std::string_view uid, bool allowed, const std::function<void(AdmissionResponseWriter&)>& more) {
  rapidjson::StringBuffer buffer;
  AdmissionResponseWriter w(buffer);
  w.StartObject();
  w.Key("apiVersion");
  w.String(kAdmissionApiVersion.data(),
           static_cast<rapidjson::SizeType>(kAdmissionApiVersion.size()));
  w.Key("kind");
  w.String("AdmissionReview");
  w.Key("response");
  w.StartObject();
  w.Key("uid");
  w.String(uid.data(), static_cast<rapidjson::SizeType>(uid.size()));
  w.Key("allowed");
  w.Bool(allowed);
  if (more) more(w);
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace capext
