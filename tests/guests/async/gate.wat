;; gate.wat - an async export held at its instance's entry gate by
;; backpressure, for the snapshot of a call that has not begun
;; (tests/unit/run/test_snapshot.c test_call_at_the_gate).
;;
;;   import wasi:clocks/monotonic-clock@0.3.0 { wait-for: async func(how-long: u64) }
;;   export hold: async func(ms: u32)   backpressure.inc, waits ms
;;       milliseconds (wait-for), backpressure.dec, returns
;;   export nap: async func(ms: u32)    waits ms milliseconds, returns
;;       (no backpressure: a call in flight beside others)
;;   export work: async func() -> u32   counts, returns the count
;;   export count: func() -> u32        how many `work` calls ran
;;
;; Each waiting call keeps its waitable set in its task's context slot
;; 0, so concurrent calls do not mix.  (tests/daemon-durable.sh: the
;; counts acknowledged while a nap is in flight survive SIGKILL.)
;;
;; While `hold` waits, a call of `work` waits at the gate (digest 3.3:
;; an async task does not start while its instance has backpressure):
;; its task is INITIAL and none of its code has run; the pending wait
;; keeps the store from being stuck (no deadlock).
;;
;; Regenerate gate.wasm: tests/guests/build.sh (jco parse; jco wit
;; validates).
(component
  (import "wasi:clocks/monotonic-clock@0.3.0" (instance $clock
    (export "wait-for" (func async (param "how-long" u64)))
  ))

  (core module $Gate
    (import "" "task.return" (func $task.return))
    (import "" "task.return.u32" (func $task.return.u32 (param i32)))
    (import "" "backpressure.inc" (func $backpressure.inc))
    (import "" "backpressure.dec" (func $backpressure.dec))
    (import "" "wait-for" (func $wait-for (param i64) (result i32)))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable-set.drop" (func $waitable-set.drop (param i32)))
    (import "" "waitable.join" (func $waitable.join (param i32 i32)))
    (import "" "subtask.drop" (func $subtask.drop (param i32)))
    (import "" "context.get" (func $context.get (result i32)))
    (import "" "context.set" (func $context.set (param i32)))
    (memory (export "mem") 1)

    (global $count (mut i32) (i32.const 0))

    (func $done (param $bp i32) (result i32)
      (if (local.get $bp) (then (call $backpressure.dec)))
      (call $task.return)
      (i32.const 0 (; EXIT ;)))

    ;; Wait ms (backpressure up meanwhile when $bp); the callback code.
    (func $wait (param $ms i32) (param $bp i32) (result i32)
      (local $r i32) (local $ws i32)
      (if (local.get $bp) (then (call $backpressure.inc)))
      (local.set $r (call $wait-for
        (i64.mul (i64.extend_i32_u (local.get $ms)) (i64.const 1000000))))
      (if (i32.eq (i32.and (local.get $r) (i32.const 0xf))
                  (i32.const 2 (; RETURNED ;)))
        (then (return (call $done (local.get $bp)))))
      (local.set $ws (call $waitable-set.new))
      (call $context.set (local.get $ws))
      (call $waitable.join (i32.shr_u (local.get $r) (i32.const 4))
                           (local.get $ws))
      (i32.or (i32.const 2 (; WAIT ;))
              (i32.shl (local.get $ws) (i32.const 4))))

    ;; event SUBTASK (1): the wait `index` RETURNED
    (func $woken (param $event i32) (param $index i32) (param $payload i32)
                 (param $bp i32) (result i32)
      (if (i32.ne (local.get $event) (i32.const 1 (; SUBTASK ;)))
        (then unreachable))
      (if (i32.ne (local.get $payload) (i32.const 2 (; RETURNED ;)))
        (then unreachable))
      (call $subtask.drop (local.get $index))
      (call $waitable-set.drop (call $context.get))
      (call $done (local.get $bp)))

    (func (export "hold") (param $ms i32) (result i32)
      (call $wait (local.get $ms) (i32.const 1)))
    (func (export "hold-cb") (param i32 i32 i32) (result i32)
      (call $woken (local.get 0) (local.get 1) (local.get 2) (i32.const 1)))
    (func (export "nap") (param $ms i32) (result i32)
      (call $wait (local.get $ms) (i32.const 0)))
    (func (export "nap-cb") (param i32 i32 i32) (result i32)
      (call $woken (local.get 0) (local.get 1) (local.get 2) (i32.const 0)))

    (func (export "work") (result i32)
      (global.set $count (i32.add (global.get $count) (i32.const 1)))
      (call $task.return.u32 (global.get $count))
      (i32.const 0 (; EXIT ;)))
    (func (export "work-cb") (param i32 i32 i32) (result i32)
      unreachable)
    (func (export "count") (result i32) (global.get $count))
  )

  (canon task.return (core func $task.return))
  (canon task.return (result u32) (core func $task.return.u32))
  (canon backpressure.inc (core func $backpressure.inc))
  (canon backpressure.dec (core func $backpressure.dec))
  (canon lower (func $clock "wait-for") async (core func $wait-for))
  (canon waitable-set.new (core func $waitable-set.new))
  (canon waitable-set.drop (core func $waitable-set.drop))
  (canon waitable.join (core func $waitable.join))
  (canon subtask.drop (core func $subtask.drop))
  (canon context.get i32 0 (core func $context.get))
  (canon context.set i32 0 (core func $context.set))
  (core instance $gate (instantiate $Gate (with "" (instance
    (export "task.return" (func $task.return))
    (export "task.return.u32" (func $task.return.u32))
    (export "backpressure.inc" (func $backpressure.inc))
    (export "backpressure.dec" (func $backpressure.dec))
    (export "wait-for" (func $wait-for))
    (export "waitable-set.new" (func $waitable-set.new))
    (export "waitable-set.drop" (func $waitable-set.drop))
    (export "waitable.join" (func $waitable.join))
    (export "subtask.drop" (func $subtask.drop))
    (export "context.get" (func $context.get))
    (export "context.set" (func $context.set))
  ))))

  (func (export "hold") async (param "ms" u32)
    (canon lift (core func $gate "hold")
      async (callback (core func $gate "hold-cb"))))
  (func (export "nap") async (param "ms" u32)
    (canon lift (core func $gate "nap")
      async (callback (core func $gate "nap-cb"))))
  (func (export "work") async (result u32)
    (canon lift (core func $gate "work")
      async (callback (core func $gate "work-cb"))))
  (func (export "count") (result u32) (canon lift (core func $gate "count")))
)
