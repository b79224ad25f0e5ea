;; outer-alias.wat - an outer alias inside a core module type may reach
;; any enclosing scope (issue 21 point 3, wasmparser's rule and
;; Binary.md's bound): count 0 is the module type itself, 1 the scope
;; it is declared in, 2 the one around that.  hostel refused counts past
;; 1 ("invalid outer alias count of 2").  tests/validation-ecosystem.sh.
;;
;; Regenerate outer-alias.wasm: tests/guests/build.sh wat.
(component
  (core type $f (func (param i32) (result i32)))
  (component $C
    (core type $g (func))
    ;; 2: the outer component's $f; 1: this component's $g
    (import "m" (core module
      (alias outer 2 $f (type))
      (alias outer 1 $g (type))
      (import "" "f" (func (type 0)))
      (export "g" (func (type 1))))))
  (type (component
    (core type (module
      (alias outer 2 $f (type))
      (export "f" (func (type 0))))))))
