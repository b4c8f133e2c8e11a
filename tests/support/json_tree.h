// JsonTree: a small ordered JSON value for tests that build Kubernetes objects: members keep the
// order they were set in, and the same tree prints as JSON (request bodies, snapshot text) and as
// block YAML (a snapshot file for people: `capacity-extender serve --snapshot`, `explain`).
//   JsonTree pod = JsonTree::Object();
//   pod["metadata"]["name"] = "p1";            // creates the nested objects
//   pod["spec"]["priority"] = 1000;
//   pod["spec"]["containers"].Push(container);  // turns a null member into an array
// References returned by operator[] and Push stay valid while the tree grows.
// Strings print double-quoted (JSON escapes, also valid YAML), so a quantity "2" stays a string.
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <utility>

namespace capext::testing {

class JsonTree {
 public:
  enum class Type { kNull, kBool, kInt, kString, kArray, kObject };

  JsonTree() = default;
  JsonTree(const char* s) : type_(Type::kString), string_(s) {}             // NOLINT: literal sugar
  JsonTree(std::string s) : type_(Type::kString), string_(std::move(s)) {}  // NOLINT
  JsonTree(int64_t i) : type_(Type::kInt), int_(i) {}                       // NOLINT
  JsonTree(int i) : type_(Type::kInt), int_(i) {}                           // NOLINT
  JsonTree(bool b) : type_(Type::kBool), bool_(b) {}                        // NOLINT
  static JsonTree Object() {
    JsonTree t;
    t.type_ = Type::kObject;
    return t;
  }
  static JsonTree Array() {
    JsonTree t;
    t.type_ = Type::kArray;
    return t;
  }

  Type type() const { return type_; }
  bool IsNull() const { return type_ == Type::kNull; }
  const std::string& str() const { return string_; }

  // The member `key`, added (null) when absent; a null tree becomes an object first.
  JsonTree& operator[](const std::string& key);
  // The member `key`, or nullptr. REQUIRES: an object (else nullptr).
  const JsonTree* Find(const std::string& key) const;
  // Appends to an array (a null tree becomes an array first).
  JsonTree& Push(JsonTree value);
  // Removes the member `key` of an object (no-op when absent).
  void Erase(const std::string& key);
  const std::list<std::pair<std::string, JsonTree>>& members() const { return members_; }
  const std::list<JsonTree>& items() const { return items_; }
  std::size_t size() const { return type_ == Type::kArray ? items_.size() : members_.size(); }

  std::string ToJson() const;
  // Block YAML; `indent` is the indentation of this value's lines (members of a mapping, items of
  // a sequence). Nested empty objects and arrays print as {} and [].
  std::string ToYaml(int indent = 0) const;

 private:
  void AppendJson(std::string* out) const;
  void AppendYaml(std::string* out, int indent) const;
  bool IsScalarForYaml() const;

  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  std::string string_;
  // Lists: references to members and items stay valid while others are added.
  std::list<JsonTree> items_;
  std::list<std::pair<std::string, JsonTree>> members_;
};

}  // namespace capext::testing
