;; reexport.wat - an exported instance whose func names the instance's
;; own type export, made by instantiating a shim component with `(eq)`
;; type imports: the shape wit-component gives every interface that
;; `use`s a type (wasi:http/handler@0.3.0 re-exports request, response
;; and error-code this way).  Valid (wasmparser agrees): the func's
;; result is the exported `code` (a variant whose payload is itself an
;; `(eq)` import, so substituting makes a new node).  We refused it as "instance not valid
;; to be used as export" when the instance type's exports were
;; substituted one by one and the func's `code` became a copy apart
;; from the exported one.
;; Regenerate: jco parse reexport.wat -o reexport.wasm
(component
  (type $r (record (field "n" u32)))
  (import "x:y/types" (instance $ti
    (export "payload" (type $p (eq $r)))
    (type $v (variant (case "a") (case "b" $p)))
    (export "code" (type (eq $v)))))
  (alias export $ti "payload" (type $payload))
  (alias export $ti "code" (type $code))
  (import "f" (func $f (result $code)))
  (component $shim
    (type $rr (record (field "n" u32)))
    (import "import-type-payload" (type $pp (eq $rr)))
    (type $vv (variant (case "a") (case "b" $pp)))
    (import "import-type-code" (type $c (eq $vv)))
    (import "import-func-f" (func $g (result $c)))
    (export $ce "code" (type $c))
    (export "f" (func $g) (func (result $ce)))
  )
  (instance $i (instantiate $shim
    (with "import-func-f" (func $f))
    (with "import-type-payload" (type $payload))
    (with "import-type-code" (type $code))))
  (export "x:y/api" (instance $i))
)
