;; version-case-clash.wat - `a:b/C@1.0.0` and `a:b/c@1.0.0` clash (a
;; label's acronym is lowercased; the versions are equal): refused, in
;; wasmparser's words.  tests/validation-ecosystem.sh.
;;
;; Regenerate version-case-clash.wasm: tests/guests/build.sh wat.
(component
  (import "a:b/C@1.0.0" (func))
  (import "a:b/c@1.0.0" (func)))
