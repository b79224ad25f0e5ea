;; async-ctor.wat - a `[constructor]` function of an async type: refused
;; in wasmparser's words, "constructor function cannot be async" (WIT
;; has no async constructor; hostel loaded it).  The sync one beside it
;; is fine.  tests/validation-ecosystem.sh.
;;
;; Regenerate async-ctor.wasm: tests/guests/build.sh wat.
(component
  (import "r" (type $r (sub resource)))
  (import "[constructor]r" (func (result (own $r))))
  (import "s" (type $s (sub resource)))
  (import "[constructor]s" (func async (result (own $s)))))
