// Narrow phase: contact points for every pair of plane, sphere, capsule and box, and through
// GJK/EPA (kernels/collide_convex.h) for cylinders, ellipsoids and mesh hulls against anything.
//
// Each pair has one function `Collide<A><B>(ta, size_a, tb, size_b, margin, out)` in its own
// header (collide_sphere_box.h, ...), with A's GeomType <= B's. It writes up to
// kMaxManifoldPoints points whose separation is below `margin` (speculative contacts) into `out`
// and returns how many. `out` is an array of ContactPoint or of Contact (CollideWorld writes its
// pool in place); only the four fields both have are written. Normals point from A to B.
// CollideGeoms dispatches on the (type A, type B) table and swaps the arguments (flipping the
// normals) so callers may pass either order.
#pragma once

#include "kernels/collide_box_box.h"
#include "kernels/collide_capsule_box.h"
#include "kernels/collide_capsule_capsule.h"
#include "kernels/collide_convex.h"
#include "kernels/collide_plane_box.h"
#include "kernels/collide_plane_capsule.h"
#include "kernels/collide_plane_sphere.h"
#include "kernels/collide_sphere_box.h"
#include "kernels/collide_sphere_capsule.h"
#include "kernels/collide_sphere_sphere.h"
#include "kernels/contact.h"
#include "kernels/model_view.h"

namespace s2r {

// radius of a sphere around the geom origin that bounds the geom (planes: infinite, returns -1)
S2R_HD Real GeomBoundingRadius(int type, const Real* size) {
  switch (type) {
    case kGeomSphere: return size[0];
    case kGeomCapsule: return size[0] + size[1];
    case kGeomBox: return Sqrt(size[0] * size[0] + size[1] * size[1] + size[2] * size[2]);
    case kGeomCylinder: return Sqrt(size[0] * size[0] + size[1] * size[1]);
    case kGeomEllipsoid: return Max(size[0], Max(size[1], size[2]));
    case kGeomMesh: return size[0];
    default: return Real(-1);
  }
}

// Contact points between geom A (type_a at ta) and geom B (type_b at tb); returns the count
// (<= kMaxManifoldPoints) written to out, normals from A to B. A switch over the type x type table
// (device code has no function pointers to spare): pairs stored as (higher type, lower type) call
// the ordered function with the geoms swapped and then flip the normals back. Points and
// separations are symmetric, only the normal's direction depends on the order. Plane-plane (two
// static half-spaces) and unknown types give no contact.
//
// Cylinders, ellipsoids and meshes (types above kGeomBox) go to the convex path: against a plane
// CollidePlaneConvex, against anything else CollideConvex. A mesh geom's hull vertices come in
// hull_a / hull_b (ignored for the other types); a mesh without a hull collides with nothing.
// kConvex false compiles the step without that path (kernels/step_features.h): such pairs then
// give no contact, so it is for models that have none.
template <bool kConvex = true, class Point>
S2R_HD int CollideGeoms(int type_a, const Transform& ta, const Real* size_a, int type_b,
                        const Transform& tb, const Real* size_b, Real margin, Point* out,
                        GeomHull hull_a = GeomHull{}, GeomHull hull_b = GeomHull{}) {
  // an out-of-range type could alias another table entry
  if (type_a < 0 || type_a >= kGeomTypeCount || type_b < 0 || type_b >= kGeomTypeCount) return 0;
  int count = 0;
  bool swapped = false;
  if (type_a > kGeomBox || type_b > kGeomBox) {
    if constexpr (!kConvex) return 0;
    if ((type_a == kGeomMesh && hull_a.count <= 0) || (type_b == kGeomMesh && hull_b.count <= 0)) {
      return 0;
    }
    // the lower type first, as for the table below, so either order gives the same points
    swapped = type_a > type_b;
    const ConvexShape lo{swapped ? type_b : type_a, swapped ? tb : ta, swapped ? size_b : size_a,
                         swapped ? hull_b.vert : hull_a.vert, swapped ? hull_b.count : hull_a.count};
    const ConvexShape hi{swapped ? type_a : type_b, swapped ? ta : tb, swapped ? size_a : size_b,
                         swapped ? hull_a.vert : hull_b.vert, swapped ? hull_a.count : hull_b.count};
    count = lo.type == kGeomPlane ? CollidePlaneConvex(lo.xform, hi, margin, out)
                                  : CollideConvex(lo, hi, margin, out);
    if (swapped) {
      for (int i = 0; i < count; ++i) out[i].normal = -out[i].normal;
    }
    return count;
  }
  switch (type_a * kGeomTypeCount + type_b) {
    // ordered pairs
    case kGeomPlane * kGeomTypeCount + kGeomSphere:
      count = CollidePlaneSphere(ta, size_a, tb, size_b, margin, out);
      break;
    case kGeomPlane * kGeomTypeCount + kGeomCapsule:
      count = CollidePlaneCapsule(ta, size_a, tb, size_b, margin, out);
      break;
    case kGeomPlane * kGeomTypeCount + kGeomBox:
      count = CollidePlaneBox(ta, size_a, tb, size_b, margin, out);
      break;
    case kGeomSphere * kGeomTypeCount + kGeomSphere:
      count = CollideSphereSphere(ta, size_a, tb, size_b, margin, out);
      break;
    case kGeomSphere * kGeomTypeCount + kGeomCapsule:
      count = CollideSphereCapsule(ta, size_a, tb, size_b, margin, out);
      break;
    case kGeomSphere * kGeomTypeCount + kGeomBox:
      count = CollideSphereBox(ta, size_a, tb, size_b, margin, out);
      break;
    case kGeomCapsule * kGeomTypeCount + kGeomCapsule:
      count = CollideCapsuleCapsule(ta, size_a, tb, size_b, margin, out);
      break;
    case kGeomCapsule * kGeomTypeCount + kGeomBox:
      count = CollideCapsuleBox(ta, size_a, tb, size_b, margin, out);
      break;
    case kGeomBox * kGeomTypeCount + kGeomBox:
      count = CollideBoxBox(ta, size_a, tb, size_b, margin, out);
      break;
    // reversed pairs: B is the lower type
    case kGeomSphere * kGeomTypeCount + kGeomPlane:
      count = CollidePlaneSphere(tb, size_b, ta, size_a, margin, out);
      swapped = true;
      break;
    case kGeomCapsule * kGeomTypeCount + kGeomPlane:
      count = CollidePlaneCapsule(tb, size_b, ta, size_a, margin, out);
      swapped = true;
      break;
    case kGeomBox * kGeomTypeCount + kGeomPlane:
      count = CollidePlaneBox(tb, size_b, ta, size_a, margin, out);
      swapped = true;
      break;
    case kGeomCapsule * kGeomTypeCount + kGeomSphere:
      count = CollideSphereCapsule(tb, size_b, ta, size_a, margin, out);
      swapped = true;
      break;
    case kGeomBox * kGeomTypeCount + kGeomSphere:
      count = CollideSphereBox(tb, size_b, ta, size_a, margin, out);
      swapped = true;
      break;
    case kGeomBox * kGeomTypeCount + kGeomCapsule:
      count = CollideCapsuleBox(tb, size_b, ta, size_a, margin, out);
      swapped = true;
      break;
    default:  // plane-plane
      return 0;
  }
  if (swapped) {
    for (int i = 0; i < count; ++i) out[i].normal = -out[i].normal;
  }
  return count;
}

}  // namespace s2r
