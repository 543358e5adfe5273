#include "host/scene/mjcf_custom.h"

#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include "host/scene/fields.h"

namespace s2r::mjcf {
namespace {

// One s2r_ setting as read: the field it sets, the entity (-1: every entity) and its values.
struct Setting {
  pugi::xml_node node;
  const FieldInfo* field;
  int entity;
  std::vector<double> data;
};

// The field whose `custom` name is `key`, or nullptr.
const FieldInfo* FieldOfCustomName(const std::string& key) {
  for (const FieldInfo& f : kModelFields) {
    if (f.custom[0] != '\0' && key == f.custom) return &f;
  }
  return nullptr;
}

// An s2r_ <numeric>: `s2r_x` or `s2r_x:<entity name>`, holding the field's values per entity,
// each within the field's bound.
Setting ReadSetting(const SourceFile& file, const Model& m, pugi::xml_node c, const std::string& name,
                    const std::vector<double>& data) {
  size_t colon = name.find(':');
  const std::string key = name.substr(0, colon);
  const FieldInfo* field = FieldOfCustomName(key);
  if (field == nullptr) {
    file.Fail(c, "unknown s2r parameter " + Quote(name) +
                     " (names starting with 's2r_' are reserved; see docs/mjcf_subset.md)");
  }
  int entity = -1;
  if (colon != std::string::npos) {
    const std::string entity_name = name.substr(colon + 1);
    const std::vector<std::string>* names = m.Names(field->entity);
    if (field->cls != FieldClass::kParam || names == nullptr) {
      file.Fail(c, "s2r parameter " + Quote(key) + " is one value for the whole scene; it takes no ':<name>'");
    }
    for (size_t i = 0; i < names->size(); ++i) {
      if (!entity_name.empty() && (*names)[i] == entity_name) entity = static_cast<int>(i);
    }
    if (entity < 0) {
      file.Fail(c, key + " override names unknown " + EntityName(field->entity) + " " + Quote(entity_name));
    }
  }
  const std::string count = std::to_string(field->per);
  if (c.attribute("size") && Word(c, "size") != count) {
    file.Fail(c, "s2r parameter " + Quote(key) + " holds " + count + " number(s); attribute 'size' must be " + count);
  }
  if (static_cast<int>(data.size()) != field->per) {
    file.Fail(c, "attribute 'data' must hold exactly " + (field->per == 1 ? std::string("one number") : count + " numbers") +
                     " for s2r parameter " + Quote(name) + ", got " + std::to_string(data.size()));
  }
  for (double v : data) {
    if (!WithinScalarBound(*field, v)) {
      file.Fail(c, "s2r parameter " + Quote(name) + " must be " + BoundText(*field) + ", got " + Num(v));
    }
  }
  return {c, field, entity, data};
}

// Writes a setting into the model: an option, or the field's values for one or every entity.
void Apply(const Setting& s, Model* m) {
  const FieldId id = IdOf(*s.field);
  if (s.field->cls == FieldClass::kOption) {
    SetOption(m, id, s.data[0]);
    // the scene's counts, kept as given (Model::ChooseSubsteps)
    if (id == FieldId::substeps || id == FieldId::substeps_no_contact || id == FieldId::substeps_soft_contact ||
        id == FieldId::solve_passes) {
      m->auto_substeps = false;
    }
    return;
  }
  ForEachParam(*m, [&](FieldId fid, auto& values) {
    if (fid != id) return;
    using T = typename std::remove_reference_t<decltype(values)>::value_type;
    const int per = s.field->per;
    for (int e = 0; e < static_cast<int>(values.size()) / per; ++e) {
      if (s.entity >= 0 && e != s.entity) continue;
      for (int k = 0; k < per; ++k) values[e * per + k] = static_cast<T>(s.data[k]);
    }
  });
}

}  // namespace

void ReadCustom(const std::vector<pugi::xml_node>& sections, LoadState* state) {
  const SourceFile& file = state->file;
  Model& m = state->model;
  std::map<std::string, int> custom_ids;  // <numeric> and <text> names seen so far

  std::vector<pugi::xml_node> entries;
  for (pugi::xml_node section : sections) {
    CheckAttributes(file, section, false);
    CheckNoText(file, section);
    for (pugi::xml_node c : section.children()) {
      if (c.type() == pugi::node_element) entries.push_back(c);
    }
  }
  std::vector<Setting> settings;
  for (pugi::xml_node c : entries) {
    std::string tag = c.name();
    if (tag != "numeric" && tag != "text") {
      file.Fail(c, "element not allowed inside <custom> (the s2r subset has numeric and text)");
    }
    CheckAttributes(file, c, false);
    CheckNoText(file, c);
    if (c.first_child()) file.Fail(c.first_child(), "unexpected child element");
    if (!c.attribute("name") || std::string(c.attribute("name").value()).empty()) {
      file.Fail(c, "missing required attribute 'name'");
    }
    std::string name = c.attribute("name").value();
    if (!custom_ids.emplace(name, 0).second) file.Fail(c, "duplicate custom name " + Quote(name));
    const bool ours = name.compare(0, 4, "s2r_") == 0;
    if (tag == "text") {
      if (ours) file.Fail(c, "names starting with 's2r_' are reserved for s2r <numeric> parameters");
      continue;
    }
    std::vector<double> data;
    for (const std::string& w : SplitWords(c.attribute("data").value())) {
      double v;
      if (!ParseReal(w, &v)) {
        file.Fail(c, "attribute 'data': " + Quote(w) + " is not a finite number");
      }
      data.push_back(v);
    }
    if (!ours) continue;  // user data: accepted and ignored
    settings.push_back(ReadSetting(file, m, c, name, data));
  }

  // options and whole-field settings first, then per-entity ones, whatever the order in the file
  for (const Setting& s : settings) {
    if (s.entity < 0) Apply(s, &m);
  }
  for (const Setting& s : settings) {
    if (s.entity >= 0) Apply(s, &m);
  }
  // bounds that involve other fields (latency_steps <= max_latency_steps), at the setting's line
  for (const Setting& s : settings) {
    if (s.field->cls != FieldClass::kParam) continue;
    ForEachParam(m, [&](FieldId fid, const auto& values) {
      if (fid != IdOf(*s.field)) return;
      std::vector<double> block(values.begin(), values.end());
      std::string error = FieldValuesError(m, fid, block.data());
      if (!error.empty()) file.Fail(s.node, error);
    });
  }
}

}  // namespace s2r::mjcf
