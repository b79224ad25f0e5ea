;; nest.wat - a few hundred bytes that ask for 2^20 component instances:
;; each level instantiates the one below it twice (issue 18: the
;; instantiator bounds the instances of one store, CM_MAX_INSTANCES).
;; Regenerate nest.wasm: tests/guests/build.sh wat.
(component $root
  (component $c0)
  (component $c1
    (alias outer $root $c0 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c2
    (alias outer $root $c1 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c3
    (alias outer $root $c2 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c4
    (alias outer $root $c3 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c5
    (alias outer $root $c4 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c6
    (alias outer $root $c5 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c7
    (alias outer $root $c6 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c8
    (alias outer $root $c7 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c9
    (alias outer $root $c8 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c10
    (alias outer $root $c9 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c11
    (alias outer $root $c10 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c12
    (alias outer $root $c11 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c13
    (alias outer $root $c12 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c14
    (alias outer $root $c13 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c15
    (alias outer $root $c14 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c16
    (alias outer $root $c15 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c17
    (alias outer $root $c16 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c18
    (alias outer $root $c17 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c19
    (alias outer $root $c18 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (component $c20
    (alias outer $root $c19 (component $x))
    (instance (instantiate $x))
    (instance (instantiate $x)))
  (instance (instantiate $c20))
)
