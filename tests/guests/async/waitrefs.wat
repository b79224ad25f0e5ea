;; waitrefs.wat - a thread blocked in a host call while its frames hold
;; references, for snapshots of such frames (runtime/wasm/snapshot_exec.c;
;; tests/unit/run/test_snapshot.c test_refs_in_blocked_frames).
;;
;;   export sleep-refs: async func(ms: u32) -> u64   a stackful task
;;       that keeps the clock reading it calls in a (ref null $t) local,
;;       a funcref local and on the operand stack, then waits ms
;;       milliseconds in a sync-lowered wait-for (blocked in the host,
;;       under a caller frame that holds references too), and returns
;;       the nanoseconds that passed, read through those references
;;
;; Regenerate waitrefs.wasm: tests/guests/build.sh wat.
(component
  (import "wasi:clocks/monotonic-clock@0.3.0" (instance $clock
    (export "now" (func (result u64)))
    (export "wait-for" (func async (param "how-long" u64)))
  ))
  (canon lower (func $clock "now") (core func $now))
  (canon lower (func $clock "wait-for") (core func $wait-for))
  (canon task.return (result u64) (core func $return-u64))
  (core module $Refs
    (import "" "now" (func $now (result i64)))
    (import "" "wait-for" (func $wait-for (param i64)))
    (import "" "task.return.u64" (func $return-u64 (param i64)))
    (type $nowty (func (result i64)))
    (type $waitty (func (param i64)))
    (func $read (result i64) (call $now))
    (elem declare func $read $wait)
    (func $wait (param $ns i64) (call $wait-for (local.get $ns)))
    ;; waits ns through w, with the reader r on the stack across the wait;
    ;; returns what r reads then
    (func $wait-with (param $r (ref $nowty)) (param $w (ref null $waitty))
                     (param $ns i64) (result i64)
      (local $any funcref)
      (local.set $any (local.get $w))
      (local.get $r)
      (call_ref $waitty (local.get $ns) (local.get $w))
      (call_ref $nowty)
      (i64.add (i64.extend_i32_u (ref.is_null (local.get $any)))))
    (func (export "sleep-refs") (param $ms i32)
      (local $f (ref null $nowty)) (local $t0 i64)
      (local.set $f (ref.func $read))
      (local.set $t0 (call_ref $nowty (local.get $f)))
      (call $return-u64
        (i64.sub
          (call $wait-with (ref.as_non_null (local.get $f)) (ref.func $wait)
            (i64.mul (i64.extend_i32_u (local.get $ms))
                     (i64.const 1000000)))
          (local.get $t0)))))
  (core instance $r (instantiate $Refs (with "" (instance
    (export "now" (func $now))
    (export "wait-for" (func $wait-for))
    (export "task.return.u64" (func $return-u64))
  ))))
  (func (export "sleep-refs") async (param "ms" u32) (result u64)
    (canon lift (core func $r "sleep-refs") async))
)
