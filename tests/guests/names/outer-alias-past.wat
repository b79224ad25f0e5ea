;; outer-alias-past.wat - an outer alias in a core module type past the
;; outermost component (count 3 here: the module type, the component
;; type, the component, then nothing): refused, in wasmparser's words
;; ("invalid outer alias count of 2": it counts the component scopes
;; past the module type's).  tests/validation-ecosystem.sh.
;;
;; Regenerate outer-alias-past.wasm: tests/guests/build.sh wat.
(component
  (core type $f (func))
  (type (component
    (core type (module
      (alias outer 3 0 (type))
      (export "f" (func (type 0))))))))
