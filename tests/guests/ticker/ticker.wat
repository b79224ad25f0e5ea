;; ticker.wat - hostel's demo component: a background task ticks on the
;; WASI 0.3 monotonic clock and counts; an export returns the count.
;;
;; World (what `jco wit ticker.wasm` prints):
;;   import wasi:clocks/monotonic-clock@0.3.0 { wait-for: async func(how-long: u64) }
;;   export start: async func()   starts the ticker (no-op when it runs)
;;   export count: func() -> u64  ticks so far
;;   export stop: func()          the ticker ends at its next tick
;;
;; How it lives between calls: `start` calls task.return at once, so its
;; caller gets its answer, and then keeps the task alive (Component Model
;; async: a task may go on after returning).  Each tick async-lowers
;; wait-for(100 ms), joins the subtask to a waitable set and returns
;; WAIT; the host settles the wait from a timer, the store's service turn
;; delivers the SUBTASK event to the callback, which counts and waits
;; again.  No call needs to be in flight for it to make progress.
;;
;; Regenerate ticker.wasm: tests/guests/build.sh (jco parse; jco wit
;; validates).
(component
  (import "wasi:clocks/monotonic-clock@0.3.0" (instance $clock
    (export "wait-for" (func async (param "how-long" u64)))
  ))

  (core module $Ticker
    (import "" "task.return" (func $task.return))
    (import "" "wait-for" (func $wait-for (param i64) (result i32)))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable-set.drop" (func $waitable-set.drop (param i32)))
    (import "" "waitable.join" (func $waitable.join (param i32 i32)))
    (import "" "subtask.drop" (func $subtask.drop (param i32)))
    (memory (export "mem") 1)

    (global $count (mut i64) (i64.const 0))
    (global $running (mut i32) (i32.const 0))
    (global $stopping (mut i32) (i32.const 0))
    (global $ws (mut i32) (i32.const 0))

    ;; Ask for the next tick; the callback code to return.
    (func $arm (result i32)
      (local $r i32)
      (local.set $r (call $wait-for (i64.const 100000000 (; 100 ms ;))))
      (if (i32.eq (i32.and (local.get $r) (i32.const 0xf))
                  (i32.const 2 (; RETURNED ;)))
        (then
          ;; the deadline had passed already: count on a YIELD
          (return (i32.const 1 (; YIELD ;)))))
      (call $waitable.join (i32.shr_u (local.get $r) (i32.const 4))
                           (global.get $ws))
      (i32.or (i32.const 2 (; WAIT ;))
              (i32.shl (global.get $ws) (i32.const 4))))

    (func (export "start") (result i32)
      (call $task.return)
      (if (global.get $running)
        (then (return (i32.const 0 (; EXIT ;)))))
      (global.set $running (i32.const 1))
      (global.set $stopping (i32.const 0))
      (global.set $ws (call $waitable-set.new))
      (call $arm))

    ;; event SUBTASK (1): the wait `index` RETURNED; NONE (0): after YIELD
    (func (export "start-cb") (param $event i32) (param $index i32)
                              (param $payload i32) (result i32)
      (if (i32.eq (local.get $event) (i32.const 1 (; SUBTASK ;)))
        (then
          (if (i32.ne (local.get $payload) (i32.const 2 (; RETURNED ;)))
            (then unreachable))
          (call $subtask.drop (local.get $index)))
        (else
          (if (i32.ne (local.get $event) (i32.const 0 (; NONE ;)))
            (then unreachable))))
      (global.set $count (i64.add (global.get $count) (i64.const 1)))
      (if (global.get $stopping)
        (then
          (call $waitable-set.drop (global.get $ws))
          (global.set $running (i32.const 0))
          (return (i32.const 0 (; EXIT ;)))))
      (call $arm))

    (func (export "count") (result i64) (global.get $count))
    (func (export "stop") (global.set $stopping (global.get $running)))
  )

  (canon task.return (core func $task.return))
  (canon lower (func $clock "wait-for") async (core func $wait-for))
  (canon waitable-set.new (core func $waitable-set.new))
  (canon waitable-set.drop (core func $waitable-set.drop))
  (canon waitable.join (core func $waitable.join))
  (canon subtask.drop (core func $subtask.drop))
  (core instance $ticker (instantiate $Ticker (with "" (instance
    (export "task.return" (func $task.return))
    (export "wait-for" (func $wait-for))
    (export "waitable-set.new" (func $waitable-set.new))
    (export "waitable-set.drop" (func $waitable-set.drop))
    (export "waitable.join" (func $waitable.join))
    (export "subtask.drop" (func $subtask.drop))
  ))))

  (func (export "start") async (canon lift (core func $ticker "start")
    async (callback (core func $ticker "start-cb"))))
  (func (export "count") (result u64) (canon lift (core func $ticker "count")))
  (func (export "stop") (canon lift (core func $ticker "stop")))
)
