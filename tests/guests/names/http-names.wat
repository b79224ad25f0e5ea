;; http-names.wat - names as wasi:http/types@0.2.0 has them: a type
;; `method` and a method `[method]incoming-request.method`.  Strongly
;; unique (Explainer, "Name uniqueness": a plain `l` clashes only with
;; `[*]l.l`); wasmparser accepts it and so must we.
;; Regenerate: jco parse http-names.wat -o http-names.wasm
(component
  (import "wasi:http/types@0.2.0" (instance
    (type $m (variant (case "get") (case "post")))
    (export "method" (type (eq $m)))
    (export "incoming-request" (type (sub resource)))
    (type $b (borrow 2))
    (export "[method]incoming-request.method" (func (param "self" $b) (result 1)))
  ))
)
