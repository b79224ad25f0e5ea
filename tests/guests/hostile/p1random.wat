;; p1random.wat - a wasi_snapshot_preview1 core module whose host calls
;; do work in proportion to what it asks: rounds(n) calls random_get of
;; 64 MiB n times.  The host's work is the guest's to pay in fuel (one
;; unit per 16 bytes, runtime/wasi/preview1.c): under --fuel 100000 two
;; rounds run out of fuel; under --fuel 100000000 they return n.
;; (tests/wasi-run.sh; regenerate: tests/guests/build.sh wat.)
(module
  (import "wasi_snapshot_preview1" "random_get"
    (func $random_get (param i32 i32) (result i32)))
  (memory (export "memory") 1025)
  (func (export "rounds") (param $n i32) (result i32)
    (local $i i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (drop (call $random_get (i32.const 0) (i32.const 67108864)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $i)))
