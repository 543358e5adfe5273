// The model's fields as users see them: by name, by entity name, with units and bounds.
//
// Everything here is read off the lists in kernels/model_fields.h: finding a field by name,
// checking values against its bound (naming the field, entity and component that is wrong),
// resolving addresses such as `body_mass[box]`, `geom_friction[box_geom, floor]`,
// `actuator_kp[*]` or `gravity.z` to the elements they cover, and the tables of
// `s2r inspect --fields` and docs/fields.md.
#pragma once

#include <string>
#include <vector>

#include "kernels/model_fields.h"

namespace s2r {

struct Model;

// nullptr when no field has that name
const FieldInfo* FindField(const std::string& name);
inline FieldId IdOf(const FieldInfo& f) { return static_cast<FieldId>(&f - kModelFields); }

const char* EntityName(Entity e);    // "body", "geom", ..., "model" for kNone
// the names of a field's per-entity values ({"x", "y", "z"}), empty when they have none
std::vector<std::string> ComponentNames(const FieldInfo& f);
const char* FieldTypeName(FieldType t);  // "float32"/"float64" (Real) or "int32"
std::string BoundText(const FieldInfo& f);  // "> 0", "in [0, 1]", "lo <= hi", ...

// A field's values per world: entities x per.
int FieldValuesPerWorld(const Model& m, FieldId id);

// The name an entity is addressed by: its name, or "#<index>" when it has none.
std::string EntityLabel(const Model& m, Entity e, int index);

// Whether one value lies within a field's bound as far as it can be told from the value alone
// (finite, whole for integer fields, sign, [0, 1], 0/1, an option's max); the bounds that
// involve several values or the model are checked by FieldValuesError.
bool WithinScalarBound(const FieldInfo& f, double value);

// "" when `values` (one world's block of the field, FieldValuesPerWorld of them) lies within the
// field's bound; else what is wrong, naming the element: "body_mass[box]: must be > 0 for a
// moving body, got 0".
std::string FieldValuesError(const Model& m, FieldId id, const double* values);
// The same for an option's one value.
std::string OptionValueError(FieldId id, double value);

// A scene option's value, and setting it (`value` already checked), by FieldId.
double OptionValue(const Model& m, FieldId id);
void SetOption(Model* m, FieldId id, double value);

// A resolved address: which elements of a field's per-world block it covers, in order (entity
// major, then component).
struct FieldAddress {
  std::string text;           // as given
  FieldId field = FieldId::kCount;
  std::vector<int> entities;  // entity indices (empty for kNone fields)
  int component = -1;         // -1: every component
  std::vector<int> elements;  // offsets into the field's per-world block
  bool whole_field = false;   // covers every element in block order (no [..] and no .component)
};

// Parses `name`, `name[entities]`, `name.component` or `name[entities].component`, where
// entities is `*` or a comma-separated list of entity names (or #index), and component a name
// from the field's component list or an index. Throws std::invalid_argument naming what is
// unknown and listing the valid names. Only per-world parameters are addressable.
FieldAddress ResolveFieldAddress(const Model& m, const std::string& text);

// One row per addressable parameter of the model for `s2r inspect --fields`: every entity with
// its nominal values.
struct FieldEntry {
  const FieldInfo* info;
  std::string entity;          // entity label ("" for kNone fields)
  std::vector<double> values;  // nominal values (per of them)
};
std::vector<FieldEntry> ParameterEntries(const Model& m);

// Generated documentation, kept in the documents between `<!-- generated:NAME -->` and
// `<!-- end generated:NAME -->` lines (tests/host/fields_test.cc fails when they differ):
//   FieldsMarkdown          docs/fields.md, every field of the three lists ("fields")
//   CustomSettingsMarkdown  docs/mjcf_subset.md, the <custom> s2r_ settings ("custom")
std::string FieldsMarkdown();
std::string CustomSettingsMarkdown();

}  // namespace s2r
