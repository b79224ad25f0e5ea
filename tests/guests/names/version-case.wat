;; version-case.wat - interface names that differ only in the case of
;; their version's pre-release (`@1.0.0-RC`, `@1.0.0-rc`) are two names:
;; acronyms are lowercased in labels, and a version is no label (semver's
;; pre-release identifiers are case-sensitive), as wasmparser has it;
;; hostel refused the pair as a clash.  `C` beside `c` in the interface's
;; label still clashes (version-case-clash.wat).
;; tests/validation-ecosystem.sh.
;;
;; Regenerate version-case.wasm: tests/guests/build.sh wat.
(component
  (import "a:b/c@1.0.0-RC" (func))
  (import "a:b/c@1.0.0-rc" (func)))
