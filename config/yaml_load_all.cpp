#include "config/yaml_load_all.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <sstream>

namespace capext {

namespace {

// Sees only where each document starts: a document that starts where the previous one did
// means the parser consumed nothing (every real document consumes at least one token).
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { start_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  const YAML::Mark& start() const { return start_; }

 private:
  YAML::Mark start_;
};

// Throws at the first document that does not advance the parser.
void CheckParserProgress(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentStarts starts;
  bool first = true;
  int previous = 0;
  while (parser.HandleNextDocument(starts)) {
    const YAML::Mark& mark = starts.start();
    if (!first && mark.pos == previous) {
      const bool inside = mark.pos >= 0 && static_cast<std::size_t>(mark.pos) < text.size();
      const char c = inside ? text[static_cast<std::size_t>(mark.pos)] : '?';
      throw YAML::ParserException(
          mark, fmt::format("unexpected '{}' here (a flow indicator outside a [...] or {{...}} "
                            "collection cannot start a value)",
                            c));
    }
    first = false;
    previous = mark.pos;
  }
}

}  // namespace

std::vector<YAML::Node> LoadAllYamlDocuments(const std::string& text) {
  CheckParserProgress(text);
  return YAML::LoadAll(text);
}

}  // namespace capext
