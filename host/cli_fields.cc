// s2r inspect --fields SCENE [--json]
// Every parameter of a scene that a sweep or sysid config can randomize or fit, addressed the way
// those configs address it (`body_mass[box]`, `geom_friction[floor]`, `gravity`), with its shape,
// unit, nominal value and valid values; then the scene options, which are the same in every
// world. Read off kernels/model_fields.h, so it lists exactly what Engine::SetParam accepts.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/cli.h"
#include "host/scene/fields.h"
#include "host/scene/model.h"
#include "host/scene/scene_source.h"

namespace s2r {
namespace {

std::string Values(const std::vector<double>& v) {
  std::string out;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof(buf), "%g", x);
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  return out;
}

nlohmann::json FieldsReport(const std::string& scene, const Model& m) {
  using nlohmann::json;
  json out;
  out["scene"] = scene;
  out["counts"] = {{"bodies", m.nbody()},  {"geoms", m.ngeom()},         {"joints", m.njoint()},
                   {"actuators", m.nactuator()}, {"sites", m.nsite()}};
  json params = json::array();
  for (const FieldEntry& e : ParameterEntries(m)) {
    const FieldInfo& f = *e.info;
    if (f.entity == Entity::kBody && e.entity == m.body_name[0]) continue;  // the world body never moves
    std::string address = f.name + (e.entity.empty() ? std::string("") : "[" + e.entity + "]");
    params.push_back({{"field", f.name},
                      {"address", address},
                      {"entity_kind", EntityName(f.entity)},
                      {"entity", e.entity},
                      {"shape", json::array({f.per})},
                      {"components", ComponentNames(f)},
                      {"dtype", FieldTypeName(f.type)},
                      {"unit", f.unit},
                      {"nominal", e.values},
                      {"valid", BoundText(f)},
                      {"description", f.description}});
  }
  out["parameters"] = params;
  json options = json::array();
  for (const FieldInfo& f : kModelFields) {
    if (f.cls != FieldClass::kOption) continue;
    options.push_back({{"field", f.name},
                       {"value", OptionValue(m, IdOf(f))},
                       {"dtype", FieldTypeName(f.type)},
                       {"unit", f.unit},
                       {"valid", BoundText(f)},
                       {"mjcf_custom", f.custom},
                       {"description", f.description}});
  }
  out["options"] = options;
  // where the substep counts came from: the scene, or the count a contact-free step needs
  out["substeps_reason"] = m.substeps_reason.empty() ? std::string("given by the scene (or the model's code)")
                                                     : "chosen (no s2r_substeps, s2r_substeps_no_contact, s2r_substeps_soft_contact or s2r_solve_passes): " + m.substeps_reason;
  return out;
}

void PrintFieldsReport(const nlohmann::json& r) {
  const auto& c = r["counts"];
  std::printf("scene %s: %d bodies, %d geoms, %d joints, %d actuators, %d sites\n",
              r["scene"].get<std::string>().c_str(), c["bodies"].get<int>(), c["geoms"].get<int>(),
              c["joints"].get<int>(), c["actuators"].get<int>(), c["sites"].get<int>());
  std::printf("\nper-world parameters (the world body omitted; address all entities as field[*], a component as field[e].x):\n");
  std::printf("  %-34s %-13s %-18s %-30s %s\n", "address", "shape", "unit", "nominal", "valid");
  for (const auto& p : r["parameters"]) {
    std::string shape = std::to_string(p["shape"][0].get<int>());
    if (!p["components"].empty()) {
      std::string names;
      for (const auto& n : p["components"]) names += (names.empty() ? "" : " ") + n.get<std::string>();
      shape += " (" + names + ")";
    }
    std::printf("  %-34s %-13s %-18s %-30s %s\n", p["address"].get<std::string>().c_str(), shape.c_str(),
                p["unit"].get<std::string>().c_str(), Values(p["nominal"].get<std::vector<double>>()).c_str(),
                p["valid"].get<std::string>().c_str());
  }
  std::printf("\nscene options (the same for every world; set in the MJCF):\n");
  for (const auto& o : r["options"]) {
    std::string custom = o["mjcf_custom"].get<std::string>();
    std::printf("  %-20s %-10g %-14s %-40s %s\n", o["field"].get<std::string>().c_str(), o["value"].get<double>(),
                o["unit"].get<std::string>().c_str(), o["valid"].get<std::string>().c_str(),
                custom.empty() ? "" : ("<custom> " + custom).c_str());
  }
  std::printf("  substeps %s\n", r["substeps_reason"].get<std::string>().c_str());
  std::fflush(stdout);
}

}  // namespace

void RunInspectFields(const std::string& scene, bool json) {
  Model m = LoadScene(scene);
  nlohmann::json report = FieldsReport(scene, m);
  if (json) {
    std::printf("%s\n", report.dump(2).c_str());
    std::fflush(stdout);
  } else {
    PrintFieldsReport(report);
  }
}

}  // namespace s2r
