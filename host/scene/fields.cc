#include "host/scene/fields.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "host/scene/model.h"

namespace s2r {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::vector<std::string> SplitWords(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

const char* EntityPlural(Entity e) {
  switch (e) {
    case Entity::kBody: return "bodies";
    case Entity::kGeom: return "geoms";
    case Entity::kJoint: return "joints";
    case Entity::kActuator: return "actuators";
    case Entity::kSite: return "sites";
    case Entity::kPair: return "pairs";
    case Entity::kReduced: return "reduced bodies";
    case Entity::kHullVert: return "hull vertices";
    case Entity::kTree: return "tree bodies";
    case Entity::kEquality: return "equalities";
    case Entity::kTendon: return "tendons";
    case Entity::kWrap: return "tendon terms";
    default: return "models";
  }
}

bool IsInteger(const FieldInfo& f) { return f.type == FieldType::kInt32; }

// "body_mass[box]", "actuator_gear[arm].2", "gravity.z"
std::string ElementName(const Model& m, const FieldInfo& f, int element) {
  int entity = element / f.per, k = element % f.per;
  std::string s = f.name;
  if (f.entity != Entity::kNone) s += "[" + EntityLabel(m, f.entity, entity) + "]";
  if (f.per > 1) {
    std::vector<std::string> names = ComponentNames(f);
    s += "." + (k < static_cast<int>(names.size()) ? names[k] : std::to_string(k));
  }
  return s;
}

std::string ValidNames(const Model& m, Entity e) {
  std::string out;
  int n = m.Count(e);
  const int kShown = 40;
  for (int i = 0; i < n && i < kShown; ++i) out += (i ? ", " : "") + EntityLabel(m, e, i);
  if (n > kShown) out += ", ... (" + std::to_string(n) + " in all)";
  return out.empty() ? "(none)" : out;
}

std::string ParameterNames() {
  std::string out;
  for (const FieldInfo& f : kModelFields) {
    if (f.cls == FieldClass::kParam) out += (out.empty() ? "" : ", ") + std::string(f.name);
  }
  return out;
}

}  // namespace

const FieldInfo* FindField(const std::string& name) {
  for (const FieldInfo& f : kModelFields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

const char* EntityName(Entity e) {
  switch (e) {
    case Entity::kBody: return "body";
    case Entity::kGeom: return "geom";
    case Entity::kJoint: return "joint";
    case Entity::kActuator: return "actuator";
    case Entity::kSite: return "site";
    case Entity::kPair: return "pair";
    case Entity::kReduced: return "reduced";
    case Entity::kHullVert: return "hull_vert";
    case Entity::kTree: return "tree";
    case Entity::kEquality: return "equality";
    case Entity::kTendon: return "tendon";
    case Entity::kWrap: return "wrap";
    default: return "model";
  }
}

std::vector<std::string> ComponentNames(const FieldInfo& f) { return SplitWords(f.components); }

const char* FieldTypeName(FieldType t) {
  if (t == FieldType::kInt32) return "int32";
  return sizeof(Real) == 4 ? "float32" : "float64";
}

std::string BoundText(const FieldInfo& f) {
  if (f.max_value < kUnbounded) {
    FieldInfo unbounded = f;
    unbounded.max_value = kUnbounded;
    return BoundText(unbounded) + " and <= " + Num(f.max_value);
  }
  const bool integer = IsInteger(f);
  switch (f.bound) {
    case FieldBound::kFinite: return integer ? "an integer" : "a finite number";
    case FieldBound::kPositive: return integer ? "an integer >= 1" : "a number > 0";
    case FieldBound::kNonNegative: return integer ? "an integer >= 0" : "a number >= 0";
    case FieldBound::kUnitInterval: return "a number >= 0 and <= 1";
    case FieldBound::kBool: return "0 or 1";
    case FieldBound::kOrdered: return "a pair with lo <= hi";
    case FieldBound::kUnitQuat: return "a unit quaternion";
    case FieldBound::kMovingPositive: return ">= 0, and > 0 for a moving body (not a body_link)";
    case FieldBound::kLatency: return "an integer >= 0 and <= max_latency_steps";
    case FieldBound::kTimestepLatency: return "a number >= 0 and < the physics steps per control step";
    default: return "any";
  }
}

bool WithinScalarBound(const FieldInfo& f, double v) {
  if (!std::isfinite(v) || v > f.max_value) return false;
  if (IsInteger(f) && (v != std::floor(v) || std::abs(v) > 2147483647.0)) return false;
  switch (f.bound) {
    case FieldBound::kPositive: return IsInteger(f) ? v >= 1 : v > 0;
    case FieldBound::kNonNegative: return v >= 0;
    case FieldBound::kUnitInterval: return v >= 0 && v <= 1;
    case FieldBound::kBool: return v == 0 || v == 1;
    default: return true;
  }
}

double OptionValue(const Model& m, FieldId id) {
  switch (id) {
#define S2R_GET_OPTION(name, ...) \
  case FieldId::name: return static_cast<double>(m.name);
    S2R_MODEL_OPTIONS(S2R_GET_OPTION)
#undef S2R_GET_OPTION
    default: throw std::invalid_argument(std::string(FieldInfoOf(id).name) + " is not a scene option");
  }
}

void SetOption(Model* m, FieldId id, double value) {
  switch (id) {
#define S2R_SET_OPTION(name, type, ...) \
  case FieldId::name: m->name = static_cast<type>(value); return;
    S2R_MODEL_OPTIONS(S2R_SET_OPTION)
#undef S2R_SET_OPTION
    default: throw std::invalid_argument(std::string(FieldInfoOf(id).name) + " is not a scene option");
  }
}

int FieldValuesPerWorld(const Model& m, FieldId id) {
  const FieldInfo& f = FieldInfoOf(id);
  return m.Count(f.entity) * f.per;
}

std::string EntityLabel(const Model& m, Entity e, int index) {
  const std::vector<std::string>* names = m.Names(e);
  if (names != nullptr && index >= 0 && index < static_cast<int>(names->size()) && !(*names)[index].empty()) {
    return (*names)[index];
  }
  return "#" + std::to_string(index);
}

std::string FieldValuesError(const Model& m, FieldId id, const double* values) {
  const FieldInfo& f = FieldInfoOf(id);
  const int n = FieldValuesPerWorld(m, id);
  auto fail = [&](int element, const std::string& what) {
    return ElementName(m, f, element) + ": must be " + what + ", got " + Num(values[element]);
  };
  for (int i = 0; i < n; ++i) {
    if (!WithinScalarBound(f, values[i])) return fail(i, BoundText(f));
  }
  switch (f.bound) {
    case FieldBound::kOrdered:
      for (int i = 0; i + 1 < n; i += 2) {
        if (!(values[i] <= values[i + 1])) {
          return ElementName(m, f, i).substr(0, ElementName(m, f, i).rfind('.')) + ": lo " + Num(values[i]) +
                 " is above hi " + Num(values[i + 1]);
        }
      }
      break;
    case FieldBound::kUnitQuat:
      for (int i = 0; i + 3 < n; i += 4) {
        double norm = std::sqrt(values[i] * values[i] + values[i + 1] * values[i + 1] +
                                values[i + 2] * values[i + 2] + values[i + 3] * values[i + 3]);
        if (!(std::abs(norm - 1) <= 1e-4)) {
          return ElementName(m, f, i).substr(0, ElementName(m, f, i).rfind('.')) +
                 ": must be a unit quaternion, got one of length " + Num(norm);
        }
      }
      break;
    case FieldBound::kMovingPositive:
      for (int i = 0; i < n; ++i) {
        int body = i / f.per;
        // a massless link between two joints of one MJCF body is the one moving body without mass
        bool moving = body < static_cast<int>(m.body_dynamic.size()) && m.body_dynamic[body] &&
                      !(body < static_cast<int>(m.body_link.size()) && m.body_link[body]);
        if (values[i] < 0) return fail(i, ">= 0");
        if (moving && !(values[i] > 0)) return fail(i, "> 0 for a moving body");
      }
      break;
    case FieldBound::kLatency:
      for (int i = 0; i < n; ++i) {
        if (values[i] < 0 || values[i] > m.max_latency_steps) {
          return fail(i, "an integer >= 0 and <= max_latency_steps (" + std::to_string(m.max_latency_steps) +
                             "; raise s2r_max_latency_steps)");
        }
      }
      break;
    case FieldBound::kTimestepLatency: {
      // the control period in physics steps, as Finalize derives it (it may not have run yet)
      const long spc = std::lround(1.0 / (static_cast<double>(m.control_hz) * m.timestep));
      for (int i = 0; i < n; ++i) {
        if (values[i] < 0 || values[i] >= static_cast<double>(spc)) {
          return fail(i, "a number >= 0 and < the physics steps per control step (" + std::to_string(spc) +
                             "); whole control periods go in latency_steps");
        }
      }
      break;
    }
    default:
      break;
  }
  return "";
}

std::string OptionValueError(FieldId id, double value) {
  const FieldInfo& f = FieldInfoOf(id);
  if (WithinScalarBound(f, value)) return "";
  return std::string("option ") + f.name + (f.custom[0] ? std::string(" (") + f.custom + ")" : "") + ": must be " +
         BoundText(f) + ", got " + Num(value);
}

FieldAddress ResolveFieldAddress(const Model& m, const std::string& text) {
  FieldAddress a;
  a.text = text;
  const std::string s = Trim(text);
  auto fail = [&](const std::string& what) { throw std::invalid_argument("parameter " + Quote(text) + ": " + what); };

  // the field
  size_t name_end = s.find_first_of("[.");
  const std::string name = Trim(s.substr(0, name_end));
  const FieldInfo* f = FindField(name);
  if (f == nullptr) fail("unknown field " + Quote(name) + "; the per-world parameters are " + ParameterNames());
  if (f->cls == FieldClass::kOption) {
    fail(Quote(name) + " is a scene option, the same for every world" +
         (f->custom[0] ? std::string(" (set it in the scene: ") + f->custom + ")" : std::string("")));
  }
  if (f->cls == FieldClass::kTopology) fail(Quote(name) + " is topology, not a per-world parameter");
  a.field = IdOf(*f);
  const int count = m.Count(f->entity);

  // the entities
  size_t pos = name_end == std::string::npos ? s.size() : name_end;
  bool bracket = pos < s.size() && s[pos] == '[';
  if (bracket) {
    if (f->entity == Entity::kNone) {
      fail(Quote(name) + " is one value set per world, not per entity; address it as " + Quote(name) +
           (f->per > 1 ? " or " + Quote(name + "." + (ComponentNames(*f).empty() ? std::string("0") : ComponentNames(*f)[0]))
                        : std::string("")));
    }
    size_t close = s.find(']', pos);
    if (close == std::string::npos) fail("missing ']'");
    std::string list = s.substr(pos + 1, close - pos - 1);
    std::vector<std::string> items;
    std::string item;
    std::istringstream in(list);
    while (std::getline(in, item, ',')) items.push_back(Trim(item));
    if (items.empty()) fail("no " + std::string(EntityName(f->entity)) + " named in []");
    for (const std::string& it : items) {
      if (it == "*") {
        for (int e = 0; e < count; ++e) a.entities.push_back(e);
        continue;
      }
      int index = -1;
      if (!it.empty() && it[0] == '#') {
        char* end = nullptr;
        long v = std::strtol(it.c_str() + 1, &end, 10);
        if (it.size() > 1 && *end == '\0' && v >= 0 && v < count) index = static_cast<int>(v);
      } else if (const std::vector<std::string>* names = m.Names(f->entity)) {
        for (size_t i = 0; i < names->size(); ++i) {
          if ((*names)[i] == it) index = static_cast<int>(i);
        }
      }
      if (index < 0) {
        fail("unknown " + std::string(EntityName(f->entity)) + " " + Quote(it) + "; the " + EntityPlural(f->entity) +
             " are " + ValidNames(m, f->entity));
      }
      for (int e : a.entities) {
        if (e == index) fail(std::string(EntityName(f->entity)) + " " + Quote(it) + " is named twice");
      }
      a.entities.push_back(index);
    }
    pos = close + 1;
  } else if (f->entity != Entity::kNone) {
    for (int e = 0; e < count; ++e) a.entities.push_back(e);
  }

  // the component
  if (pos < s.size()) {
    if (s[pos] != '.') fail("unexpected " + Quote(s.substr(pos)) + " after the field");
    std::string comp = Trim(s.substr(pos + 1));
    std::vector<std::string> names = ComponentNames(*f);
    for (size_t k = 0; k < names.size(); ++k) {
      if (names[k] == comp) a.component = static_cast<int>(k);
    }
    if (a.component < 0 && !comp.empty() && comp.find_first_not_of("0123456789") == std::string::npos) {
      long k = std::strtol(comp.c_str(), nullptr, 10);
      if (k < f->per) a.component = static_cast<int>(k);
    }
    if (a.component < 0 || f->per == 1) {
      fail("unknown component " + Quote(comp) + " of " + Quote(name) +
           (f->per == 1 ? " (it has one value per " + std::string(EntityName(f->entity)) + ")"
                        : "; its components are " + (names.empty() ? std::string("") : f->components + std::string(" or ")) +
                              "0.." + std::to_string(f->per - 1)));
    }
  }

  // the elements
  a.whole_field = !bracket && a.component < 0;
  std::vector<int> entities = f->entity == Entity::kNone ? std::vector<int>{0} : a.entities;
  for (int e : entities) {
    for (int k = 0; k < f->per; ++k) {
      if (a.component < 0 || a.component == k) a.elements.push_back(e * f->per + k);
    }
  }
  return a;
}

std::vector<FieldEntry> ParameterEntries(const Model& m) {
  std::vector<FieldEntry> out;
  ForEachParam(m, [&](FieldId id, const auto& values) {
    const FieldInfo& f = FieldInfoOf(id);
    for (int e = 0; e < m.Count(f.entity); ++e) {
      FieldEntry entry{&f, f.entity == Entity::kNone ? "" : EntityLabel(m, f.entity, e), {}};
      for (int k = 0; k < f.per; ++k) entry.values.push_back(static_cast<double>(values[e * f.per + k]));
      out.push_back(entry);
    }
  });
  return out;
}

std::string FieldsMarkdown() {
  std::string out;
  auto row = [&out](const std::vector<std::string>& cells) {
    out += "|";
    for (const std::string& c : cells) out += " " + c + " |";
    out += "\n";
  };
  auto shape = [](const FieldInfo& f) {
    std::string s = f.entity == Entity::kNone ? std::string("") : std::string(EntityName(f.entity));
    if (f.per > 1 || s.empty()) s += (s.empty() ? "" : " x ") + std::to_string(f.per);
    if (f.components[0]) s += " (" + std::string(f.components) + ")";
    return s;
  };
  auto code = [](const char* s) { return s[0] ? "`" + std::string(s) + "`" : std::string(""); };
  auto defaults = [](const FieldInfo& f) {
    std::string s;
    for (int k = 0; k < f.per; ++k) s += (k ? " " : "") + Num(f.defaults[k]);
    return s;
  };

  out += "### Per-world parameters\n\n";
  row({"field", "type", "shape", "unit", "valid values", "default", "MJCF custom", "meaning"});
  row({"---", "---", "---", "---", "---", "---", "---", "---"});
  for (const FieldInfo& f : kModelFields) {
    if (f.cls != FieldClass::kParam) continue;
    row({code(f.name), f.type == FieldType::kInt32 ? "int32" : "real", shape(f), f.unit, BoundText(f), defaults(f),
         code(f.custom), f.description});
  }
  out += "\n### Scene options (the same for every world)\n\n";
  row({"field", "type", "unit", "valid values", "default", "MJCF custom", "meaning"});
  row({"---", "---", "---", "---", "---", "---", "---"});
  for (const FieldInfo& f : kModelFields) {
    if (f.cls != FieldClass::kOption) continue;
    row({code(f.name), f.type == FieldType::kInt32 ? "int32" : "real", f.unit, BoundText(f), defaults(f),
         code(f.custom), f.description});
  }
  out += "\n### Topology (shared by every world; derived ones are computed when the scene loads)\n\n";
  row({"field", "type", "shape", "derived", "meaning"});
  row({"---", "---", "---", "---", "---"});
  for (const FieldInfo& f : kModelFields) {
    if (f.cls != FieldClass::kTopology) continue;
    row({code(f.name), f.type == FieldType::kInt32 ? "int32" : "real", shape(f), f.derived ? "yes" : "", f.description});
  }
  return out;
}

std::string CustomSettingsMarkdown() {
  std::string out = "| name | sets | per entity | valid values | default | meaning |\n|---|---|---|---|---|---|\n";
  for (const FieldInfo& f : kModelFields) {
    if (f.custom[0] == '\0') continue;
    std::string name = "`" + std::string(f.custom) + "`";
    if (f.entity != Entity::kNone) name += ", `" + std::string(f.custom) + ":<" + EntityName(f.entity) + ">`";
    std::string defaults;
    for (int k = 0; k < f.per; ++k) defaults += (k ? " " : "") + Num(f.defaults[k]);
    out += "| " + name + " | `" + f.name + "`" + (f.cls == FieldClass::kOption ? " (option)" : "") + " | " +
           std::to_string(f.per) + " | " + BoundText(f) + " | " + defaults + " | " + f.description + " |\n";
  }
  return out;
}

}  // namespace s2r
