/*
 * wit.h - render what a component imports and exports in WIT syntax.
 *
 * Contract: cm_wit_world returns a NUL-terminated, malloc'd text (the
 * caller frees it) or NULL when out of memory.  The text is a WIT world:
 * plain-named functions and types inline (`import log: func(msg: string);`),
 * plain-named instances as inline interfaces, interface-named instances as
 * `import ns:pkg/iface@1.0.0;` followed, after the world, by one
 * `interface` block per such name holding its types, resources (with
 * their constructors, methods and static functions) and functions.  A type
 * that comes from another interface is shown with `use`.  Sorts WIT cannot
 * express (core modules, components, values) appear as comments.  The
 * output is for people and diffs; it is not guaranteed to parse as a WIT
 * package (anonymous records, for instance, are printed structurally).
 */
#ifndef HOSTEL_COMPONENT_WIT_H
#define HOSTEL_COMPONENT_WIT_H

#include "component/types.h"

char *cm_wit_world(const cm_component *c, const char *world_name);

#endif
