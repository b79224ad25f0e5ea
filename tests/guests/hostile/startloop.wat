;; startloop.wat - a guest whose core start function never ends: it runs
;; while the component is instantiated (deploy, start, recreate), on the
;; daemon's loop, so only a fuel budget stops it (tests/daemon-hostile.sh,
;; issue 9 point 4).
;;
;;   export ping: func() -> u32   never reached: instantiation traps
;;
;; Regenerate startloop.wasm: tests/guests/build.sh wat.
(component
  (core module $M
    (func $for-ever (loop $l (br $l)))
    (func (export "ping") (result i32) (i32.const 1))
    (start $for-ever))
  (core instance $m (instantiate $M))
  (func (export "ping") (result u32) (canon lift (core func $m "ping"))))
