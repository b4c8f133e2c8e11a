#include "extender/kube/api_envelopes.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "config/json_pull_reader.h"
#include "config/protobuf_wire.h"
#include "extender/kube/protobuf_envelopes.h"

namespace capext::kube {
namespace {

// SAX parsing keeps each object's exact bytes: the reader's position after '{' and after '}'
// delimits it. MemoryStream::Tell() is that position.
constexpr unsigned kParseFlags = rapidjson::kParseDefaultFlags;

std::string JsonQuote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xF];
      out += hex[c & 0xF];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Status ParseErrorStatus(const char* what, rapidjson::ParseErrorCode code, size_t offset) {
  return Status::Error(std::string(what) + ": " + rapidjson::GetParseError_En(code) + " at byte " +
                       std::to_string(offset));
}

class ListHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ListHandler> {
 public:
  struct Item {
    size_t begin = 0;
    size_t end = 0;
    bool has_kind = false;
    bool has_api_version = false;
  };

  explicit ListHandler(rapidjson::MemoryStream* stream, ListPage* page)
      : stream_(stream), page_(page) {}

  bool Key(const char* text, rapidjson::SizeType length, bool) {
    std::string_view key(text, length);
    if (depth_ == 1) {
      key1_ = key;
    } else if (depth_ == 2) {
      key2_ = key;
    } else if (depth_ == 3 && in_items_) {
      if (key == "kind") items_.back().has_kind = true;
      if (key == "apiVersion") items_.back().has_api_version = true;
    }
    return true;
  }
  bool String(const char* text, rapidjson::SizeType length, bool) {
    std::string_view value(text, length);
    if (depth_ == 1 && key1_ == "kind") page_->kind = value;
    if (depth_ == 1 && key1_ == "apiVersion") page_->api_version = value;
    if (depth_ == 2 && key1_ == "metadata" && !in_items_) {
      if (key2_ == "resourceVersion") page_->resource_version = value;
      if (key2_ == "continue") page_->continue_token = value;
    }
    return true;
  }
  bool StartObject() {
    ++depth_;
    if (depth_ == 3 && in_items_) {
      items_.emplace_back();
      items_.back().begin = stream_->Tell() - 1;
    }
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    if (depth_ == 3 && in_items_) items_.back().end = stream_->Tell();
    --depth_;
    return true;
  }
  bool StartArray() {
    ++depth_;
    if (depth_ == 2 && key1_ == "items") in_items_ = true;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    if (depth_ == 2) in_items_ = false;
    --depth_;
    return true;
  }
  bool Default() { return true; }

  const std::vector<Item>& items() const { return items_; }

 private:
  rapidjson::MemoryStream* stream_;
  ListPage* page_;
  int depth_ = 0;
  bool in_items_ = false;
  std::string key1_;
  std::string key2_;
  std::vector<Item> items_;
};

std::string StringMember(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

// meta/v1 StatusCause {reason = 1, message = 2, field = 3}.
bool ParseProtobufCause(std::string_view message, std::pair<std::string, std::string>* out) {
  protobuf::WireReader reader(message);
  protobuf::Field field;
  while (reader.Next(&field)) {
    if (field.number != 1 && field.number != 2) continue;
    if (!field.is_bytes()) return false;
    (field.number == 1 ? out->first : out->second).assign(field.bytes);
  }
  return reader.ok();
}

// meta/v1 StatusDetails {name = 1, group = 2, kind = 3, causes = 4, retryAfterSeconds = 5,
// uid = 6}: the causes and retryAfterSeconds.
bool ParseProtobufDetails(std::string_view message, ApiStatus* out) {
  protobuf::WireReader reader(message);
  protobuf::Field field;
  while (reader.Next(&field)) {
    if (field.number == 4) {
      if (!field.is_bytes()) return false;
      std::pair<std::string, std::string> cause;
      if (!ParseProtobufCause(field.bytes, &cause)) return false;
      out->causes.push_back(std::move(cause));
    } else if (field.number == 5) {
      if (!field.is_varint()) return false;
      out->retry_after_seconds = static_cast<int32_t>(static_cast<uint32_t>(field.value));
    }
  }
  return reader.ok();
}

// A protobuf Status body: "k8s\0" + runtime.Unknown of kind Status, whose raw is a meta/v1
// Status {metadata = 1, status = 2, message = 3, reason = 4, details = 5, code = 6}.
bool ParseProtobufApiStatus(std::string_view body, ApiStatus* out) {
  ProtobufObject object;
  if (!ParseProtobufObject(body, &object).ok() || object.kind != "Status") return false;
  ApiStatus status;
  protobuf::WireReader reader(object.raw);
  protobuf::Field field;
  while (reader.Next(&field)) {
    switch (field.number) {
      case 2:
      case 3:
      case 4: {
        if (!field.is_bytes()) return false;
        std::string* text = field.number == 2   ? &status.status
                            : field.number == 3 ? &status.message
                                                : &status.reason;
        text->assign(field.bytes);
        break;
      }
      case 5:
        if (!field.is_bytes() || !ParseProtobufDetails(field.bytes, &status)) return false;
        break;
      case 6:
        if (!field.is_varint()) return false;
        status.code = static_cast<int32_t>(static_cast<uint32_t>(field.value));
        break;
      default:
        break;
    }
  }
  if (!reader.ok()) return false;
  *out = std::move(status);
  return true;
}

}  // namespace

Status ParseListPage(std::string_view body, ListPage* out) {
  ListPage page;
  rapidjson::MemoryStream stream(body.data(), body.size());
  ListHandler handler(&stream, &page);
  rapidjson::Reader reader;
  rapidjson::ParseResult result = reader.Parse<kParseFlags>(stream, handler);
  if (!result) return ParseErrorStatus("list response", result.Code(), result.Offset());
  if (page.kind.empty() && page.api_version.empty()) {
    return Status::Error("list response has neither kind nor apiVersion");
  }
  // "PodList" -> "Pod": the kind to put into items that lack one.
  std::string item_kind;
  if (page.kind.size() > 4 && page.kind.compare(page.kind.size() - 4, 4, "List") == 0) {
    item_kind = page.kind.substr(0, page.kind.size() - 4);
  }
  page.items.reserve(handler.items().size());
  for (const auto& item : handler.items()) {
    std::string_view text = body.substr(item.begin, item.end - item.begin);
    std::string prefix;
    if (!item.has_kind && !item_kind.empty()) prefix += "\"kind\":" + JsonQuote(item_kind) + ",";
    if (!item.has_api_version && !page.api_version.empty()) {
      prefix += "\"apiVersion\":" + JsonQuote(page.api_version) + ",";
    }
    if (prefix.empty()) {
      page.items.emplace_back(text);
      continue;
    }
    std::string_view rest = text.substr(1);                                    // after '{'
    bool empty_object = rest.find_first_not_of(" \t\r\n") == rest.size() - 1;  // only '}' left
    if (empty_object) prefix.pop_back();  // no member follows: drop the trailing comma
    std::string rewritten;
    rewritten.reserve(text.size() + prefix.size());
    rewritten += '{';
    rewritten += prefix;
    rewritten.append(empty_object ? std::string_view("}") : rest);
    page.items.push_back(std::move(rewritten));
  }
  *out = std::move(page);
  return Status::Ok();
}

Status ParseWatchEvent(std::string_view line, WatchEventEnvelope* out) {
  // One parse onto the thread's token tape, offered for reuse: decoding the event's object right
  // after (config/object_stream_decoder.h) walks the same tokens instead of parsing again.
  json::JsonPullReader reader(line);
  std::string type, resource_version;
  size_t object_begin = 0, object_end = 0;
  std::string_view key1, key2, key3;  // the last key seen at depth 1, 2, 3
  int depth = 0;
  for (json::Token t = reader.Next(); t != json::Token::kEnd; t = reader.Next()) {
    switch (t) {
      case json::Token::kError:
        return Status::Error("watch event: " + reader.error().message());
      case json::Token::kKey:
        if (depth == 1) key1 = reader.text();
        if (depth == 2) key2 = reader.text();
        if (depth == 3) key3 = reader.text();
        break;
      case json::Token::kString:
        if (depth == 1 && key1 == "type") type.assign(reader.text());
        if (depth == 3 && key1 == "object" && key2 == "metadata" && key3 == "resourceVersion") {
          resource_version.assign(reader.text());
        }
        break;
      case json::Token::kStartObject:
        ++depth;
        if (depth == 2 && key1 == "object") object_begin = reader.byte_offset();
        if (depth == 2) key2 = {};
        if (depth == 3) key3 = {};
        break;
      case json::Token::kEndObject:
        if (depth == 2 && key1 == "object") object_end = reader.byte_offset();
        --depth;
        break;
      case json::Token::kStartArray:
        ++depth;
        break;
      case json::Token::kEndArray:
        --depth;
        break;
      default:
        break;
    }
  }
  if (type.empty()) return Status::Error("watch event without a type");
  if (object_end <= object_begin)
    return Status::Error("watch event " + type + " without an object");
  reader.OfferForReuse();
  out->type = std::move(type);
  out->resource_version = std::move(resource_version);
  out->object = line.substr(object_begin, object_end - object_begin);
  return Status::Ok();
}

bool ParseApiStatus(std::string_view body, ApiStatus* out) {
  if (body.substr(0, kProtobufMagic.size()) == kProtobufMagic) {
    return ParseProtobufApiStatus(body, out);
  }
  rapidjson::Document document;
  document.Parse<kParseFlags>(body.data(), body.size());
  if (document.HasParseError() || !document.IsObject()) return false;
  if (StringMember(document, "kind") != "Status") return false;
  ApiStatus status;
  status.status = StringMember(document, "status");
  status.reason = StringMember(document, "reason");
  status.message = StringMember(document, "message");
  auto code = document.FindMember("code");
  if (code != document.MemberEnd() && code->value.IsInt()) status.code = code->value.GetInt();
  auto details = document.FindMember("details");
  if (details != document.MemberEnd() && details->value.IsObject()) {
    auto causes = details->value.FindMember("causes");
    if (causes != details->value.MemberEnd() && causes->value.IsArray()) {
      for (const auto& cause : causes->value.GetArray()) {
        if (!cause.IsObject()) continue;
        status.causes.emplace_back(StringMember(cause, "reason"), StringMember(cause, "message"));
      }
    }
    auto retry = details->value.FindMember("retryAfterSeconds");
    if (retry != details->value.MemberEnd() && retry->value.IsInt()) {
      status.retry_after_seconds = retry->value.GetInt();
    }
  }
  *out = std::move(status);
  return true;
}

}  // namespace capext::kube
