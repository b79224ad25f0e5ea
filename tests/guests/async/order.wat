;; order.wat - a waitable set delivers the member whose event was armed
;; first (runtime/run/waitable.c: a pending queue, constant time however
;; large the set; definitions.py shuffles, so any order is the spec's).
;; order() joins three stream read ends a, b, c (handles 2, 4, 6) in that
;; order, completes c's read and then a's, and polls three times: it
;; returns first << 16 | second << 8 | the third poll's event code, 0x060200
;; (393728).  tests/waitable-order.sh; regenerate: tests/guests/build.sh wat.
(component
  (type $bytes (stream u8))
  (core module $Memory (memory (export "mem") 1))
  (core instance $memory (instantiate $Memory))
  (core module $M
    (import "" "mem" (memory 1))
    (import "" "waitable-set.new" (func $ws.new (result i32)))
    (import "" "waitable-set.poll" (func $ws.poll (param i32 i32) (result i32)))
    (import "" "waitable.join" (func $join (param i32 i32)))
    (import "" "stream.new" (func $stream.new (result i64)))
    (import "" "stream.read" (func $read (param i32 i32 i32) (result i32)))
    (import "" "stream.write" (func $write (param i32 i32 i32) (result i32)))
    (func (export "order") (result i32)
      (local $ws i32) (local $a i64) (local $b i64) (local $c i64) (local $r i32)
      (local.set $ws (call $ws.new))
      (local.set $a (call $stream.new))
      (local.set $b (call $stream.new))
      (local.set $c (call $stream.new))
      (drop (call $read (i32.wrap_i64 (local.get $a)) (i32.const 100) (i32.const 1)))
      (drop (call $read (i32.wrap_i64 (local.get $b)) (i32.const 101) (i32.const 1)))
      (drop (call $read (i32.wrap_i64 (local.get $c)) (i32.const 102) (i32.const 1)))
      (call $join (i32.wrap_i64 (local.get $a)) (local.get $ws))
      (call $join (i32.wrap_i64 (local.get $b)) (local.get $ws))
      (call $join (i32.wrap_i64 (local.get $c)) (local.get $ws))
      ;; c's read completes first, then a's
      (drop (call $write (i32.wrap_i64 (i64.shr_u (local.get $c) (i64.const 32))) (i32.const 0) (i32.const 1)))
      (drop (call $write (i32.wrap_i64 (i64.shr_u (local.get $a) (i64.const 32))) (i32.const 0) (i32.const 1)))
      (drop (call $ws.poll (local.get $ws) (i32.const 200)))
      (drop (call $ws.poll (local.get $ws) (i32.const 208)))
      (local.set $r (call $ws.poll (local.get $ws) (i32.const 216)))
      ;; first index, second index, third event code (0: none)
      (i32.or (i32.or (i32.shl (i32.load (i32.const 200)) (i32.const 16))
                      (i32.shl (i32.load (i32.const 208)) (i32.const 8)))
              (local.get $r))))
  (canon waitable-set.new (core func $ws.new))
  (canon waitable-set.poll (memory (core memory $memory "mem")) (core func $ws.poll))
  (canon waitable.join (core func $join))
  (canon stream.new $bytes (core func $stream.new))
  (canon stream.read $bytes async (memory (core memory $memory "mem")) (core func $read))
  (canon stream.write $bytes async (memory (core memory $memory "mem")) (core func $write))
  (core instance $m (instantiate $M (with "" (instance
    (export "mem" (memory $memory "mem"))
    (export "waitable-set.new" (func $ws.new))
    (export "waitable-set.poll" (func $ws.poll))
    (export "waitable.join" (func $join))
    (export "stream.new" (func $stream.new))
    (export "stream.read" (func $read))
    (export "stream.write" (func $write))))))
  (func (export "order") (result u32) (canon lift (core func $m "order")))
)
