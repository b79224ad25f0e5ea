;; randomwork.wat - a component whose lowered host call does work in
;; proportion to what it asks: spin(n) calls wasi:random get-random-bytes
;; of 1 MiB n times.  Writing a lowered result into guest memory is work
;; the guest pays in fuel (cabi/cx.c cabi_realloc_checked, billed at 16
;; bytes a unit): under --fuel 100000 three rounds run out of fuel; under
;; 100000000 they return 3.  (tests/wasi-run.sh; regenerate:
;; tests/guests/build.sh wat.)
(component
  (import "wasi:random/random@0.2.3" (instance $r
    (export "get-random-bytes" (func (param "len" u64) (result (list u8))))))
  (core module $Mem
    (memory (export "mem") 40)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (i32.const 65536)))
  (core instance $mem (instantiate $Mem))
  (core func $grb (canon lower (func $r "get-random-bytes")
    (memory (core memory $mem "mem")) (realloc (core func $mem "realloc"))))
  (core module $M
    (import "" "grb" (func $grb (param i64 i32)))
    (func (export "spin") (param $n i32) (result i32)
      (local $i i32)
      (block $d (loop $l
        (br_if $d (i32.ge_u (local.get $i) (local.get $n)))
        (call $grb (i64.const 1048576) (i32.const 0))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
      (local.get $i)))
  (core instance $m (instantiate $M (with "" (instance (export "grb" (func $grb))))))
  (func (export "spin") (param "n" u32) (result u32) (canon lift (core func $m "spin")))
)
