#include "host/scene/mjcf_include.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "host/scene/mjcf_attributes.h"
#include "host/scene/mjcf_load.h"
#include "host/scene/scene_source.h"

namespace s2r::mjcf {
namespace {

namespace fs = std::filesystem;

const std::string kBuiltin = "builtin:";

// The candidates for `file` included from `from` in the document `main`: relative to main's
// folder, then to from's (MuJoCo 4's order); an absolute path alone.
std::vector<fs::path> Candidates(const std::string& main, const std::string& from,
                                 const std::string& file) {
  fs::path p(file);
  if (p.is_absolute()) return {p.lexically_normal()};
  std::vector<fs::path> out = {(fs::path(main).parent_path() / p).lexically_normal()};
  fs::path local = (fs::path(from).parent_path() / p).lexically_normal();
  if (local != out[0]) out.push_back(local);
  return out;
}

// builtin:<name>, with <name> the file's path under configs/robots or configs/scenes
bool ReadBuiltin(const std::string& main, const std::string& from, const std::string& file,
                 std::string* name, std::string* text, std::string* error) {
  std::string known;
  std::vector<std::string> tried;
  for (const fs::path& c : Candidates(main.substr(kBuiltin.size()),
                                      from.substr(kBuiltin.size()), file)) {
    std::string rel = c.generic_string();
    if (c.is_absolute() || rel.rfind("..", 0) == 0 || rel.size() < 4 ||
        rel.compare(rel.size() - 4, 4, ".xml") != 0) {
      *error = "a built-in scene may include only built-in .xml files (by their path under "
               "configs/robots or configs/scenes), not " + Quote(file);
      return false;
    }
    tried.push_back(rel);
    std::string key = rel.substr(0, rel.size() - 4);
    known.clear();
    for (const auto* list : {&EmbeddedScenes(), &EmbeddedRobotFiles()}) {
      for (const EmbeddedScene& s : *list) {
        if (key == s.name) {
          *name = kBuiltin + rel;
          *text = s.xml;
          return true;
        }
        known += (known.empty() ? "" : ", ") + std::string(s.name) + ".xml";
      }
    }
  }
  std::string list;
  for (const std::string& t : tried) list += (list.empty() ? "" : " or ") + Quote(t);
  *error = "no built-in file " + list + " (a built-in scene may include only built-in files: " +
           known + ")";
  return false;
}

bool ReadFromDisk(const std::string& main, const std::string& from, const std::string& file,
                  std::string* name, std::string* text, std::string* error) {
  std::string tried;
  for (const fs::path& c : Candidates(main, from, file)) {
    std::ifstream in(c, std::ios::binary);
    if (!in) {
      tried += (tried.empty() ? "" : " or ") + Quote(c.string());
      continue;
    }
    std::ostringstream out;
    out << in.rdbuf();
    if (in.bad()) {
      *error = "read error in included file " + Quote(c.string());
      return false;
    }
    *name = c.string();
    *text = out.str();
    return true;
  }
  *error = "cannot open included file " + tried;
  return false;
}

// Identity of a file for cycle detection.
std::string FileKey(const std::string& name) {
  if (name.rfind(kBuiltin, 0) == 0) {
    // builtin:<name> and builtin:<name>.xml are the same file
    const bool xml = name.size() > 4 && name.compare(name.size() - 4, 4, ".xml") == 0;
    return xml ? name.substr(0, name.size() - 4) : name;
  }
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::path(name), ec);
  return ec ? name : p.string();
}

class Expander {
 public:
  Expander(SourceFile* file, const IncludeReader& read) : file_(*file), read_(read) {
    chains_[file_.name()] = {file_.name()};
  }

  // Expands the includes among the descendants of `parent`.
  void Expand(pugi::xml_node parent) {
    for (pugi::xml_node c = parent.first_child(); c;) {
      if (c.type() == pugi::node_element && std::string(c.name()) == "include") {
        pugi::xml_node next = Include(c);
        parent.remove_child(c);
        c = next;
        continue;
      }
      if (c.type() == pugi::node_element) Expand(c);
      c = c.next_sibling();
    }
  }

 private:
  // Copies the included file's root children in before `inc`; returns the first copy (or the
  // element after `inc` when the file is empty).
  pugi::xml_node Include(pugi::xml_node inc) {
    CheckAttributes(file_, inc, false);
    CheckNoText(file_, inc);
    if (inc.first_child()) file_.Fail(inc.first_child(), "<include> takes no child elements");
    if (!inc.attribute("file") || std::string(inc.attribute("file").value()).empty()) {
      file_.Fail(inc, "missing required attribute 'file'");
    }
    const std::string from = file_.FileOf(inc);
    const std::vector<std::string>& chain = chains_[from];
    std::string chain_text;
    for (const std::string& f : chain) chain_text += (chain_text.empty() ? "" : " -> ") + f;

    std::string name, text, error;
    if (!read_(file_.name(), from, inc.attribute("file").value(), &name, &text, &error)) {
      file_.Fail(inc, error + " (include chain: " + chain_text + ")");
    }
    for (const std::string& f : chain) {
      if (FileKey(f) == FileKey(name)) {
        file_.Fail(inc, "include cycle: " + chain_text + " -> " + name);
      }
    }
    std::vector<std::string> sub_chain = chain;
    sub_chain.push_back(name);
    chains_[name] = sub_chain;

    // the included document, parsed on its own so its lines are its own
    SourceFile included(text, name);
    pugi::xml_document doc;
    pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size(),
                                                    pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) {
      throw LoadError(name + ":" + std::to_string(included.LineOfOffset(parsed.offset)) +
                      ": <xml>: malformed XML: " + parsed.description() + " (included from " +
                      file_.Where(inc) + ")");
    }
    pugi::xml_node root = doc.document_element();
    if (!root) {
      throw LoadError(name + ":1: <xml>: no root element (expected <mujoco>; included from " +
                      file_.Where(inc) + ")");
    }
    if (std::string(root.name()) != "mujoco") {
      included.Fail(root, "the root element of an included file must be <mujoco> (included from " +
                              file_.Where(inc) + ")");
    }
    CheckNoText(included, root);

    pugi::xml_node first;
    for (pugi::xml_node c : root.children()) {
      if (c.type() != pugi::node_element) continue;
      pugi::xml_node copy = inc.parent().insert_copy_before(c, inc);
      Mark(copy, c, included, name, inc);
      if (!first) first = copy;
    }
    return first ? first : inc.next_sibling();
  }

  // Records the origin of every element of `copy` (a copy of `orig`, of file `name`, brought in by
  // the <include> `inc`).
  void Mark(pugi::xml_node copy, pugi::xml_node orig, const SourceFile& src, const std::string& name,
            pugi::xml_node inc) {
    file_.MarkIncluded(copy, name, src.LineOf(orig), inc);
    pugi::xml_node a = copy.first_child(), b = orig.first_child();
    for (; a && b; a = a.next_sibling(), b = b.next_sibling()) Mark(a, b, src, name, inc);
  }

  SourceFile& file_;
  const IncludeReader& read_;
  std::map<std::string, std::vector<std::string>> chains_;  // file -> the includes leading to it
};

}  // namespace

IncludeReader DefaultIncludeReader(const std::string& from) {
  if (from.rfind(kBuiltin, 0) == 0) return ReadBuiltin;
  return ReadFromDisk;
}

void ExpandIncludes(pugi::xml_node root, SourceFile* file, const IncludeReader& read) {
  Expander(file, read).Expand(root);
}

}  // namespace s2r::mjcf
