;; ll-clash.wat - the one case of "Name uniqueness" where a plain label
;; and a method clash: `foo` and `[method]foo.foo`.  Invalid.
;; Regenerate: jco parse ll-clash.wat -o ll-clash.wasm
(component
  (import "x:y/z" (instance
    (export "foo" (type (sub resource)))
    (type $b (borrow 0))
    (export "[method]foo.foo" (func (param "self" $b)))
  ))
)
