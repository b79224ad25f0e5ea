;; churn.wat - one call creates and drops every kind of async object, for
;; the leak test (tests/unit/run/test_liveness.c, issue 5: 10,000 calls).
;;
;;   import wasi:clocks/monotonic-clock@0.3.0 { wait-for }
;;   export churn: async func()
;;       waitable-set.new/drop; stream.new, drop both ends; future.new,
;;       drop the reader, write (DROPPED), drop the writer; wait-for(1 h) (a pending host call, so a real
;;       subtask), subtask.cancel it (async), wait for the cancelled
;;       subtask on a new waitable set, drop the subtask and the set,
;;       task.return
;;   export top-handle: func() -> u32
;;       the largest handle index the last churn got: stays the same
;;       from call to call when every handle is freed
;;
;; One churn at a time (its state is in globals): the test calls it in
;; sequence.  Regenerate churn.wasm: tests/guests/build.sh.
(component
  (import "wasi:clocks/monotonic-clock@0.3.0" (instance $clock
    (export "wait-for" (func async (param "how-long" u64)))
  ))
  (type $bytes (stream u8))
  (type $later (future u32))

  (core module $Memory (memory (export "mem") 1))
  (core instance $memory (instantiate $Memory))

  (core module $Churn
    (import "" "task.return" (func $task.return))
    (import "" "wait-for" (func $wait-for (param i64) (result i32)))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable-set.drop" (func $waitable-set.drop (param i32)))
    (import "" "waitable.join" (func $waitable.join (param i32 i32)))
    (import "" "subtask.drop" (func $subtask.drop (param i32)))
    (import "" "subtask.cancel" (func $subtask.cancel (param i32) (result i32)))
    (import "" "stream.new" (func $stream.new (result i64)))
    (import "" "stream.drop-readable" (func $stream.drop-readable (param i32)))
    (import "" "stream.drop-writable" (func $stream.drop-writable (param i32)))
    (import "" "future.new" (func $future.new (result i64)))
    (import "" "future.drop-readable" (func $future.drop-readable (param i32)))
    (import "" "future.drop-writable" (func $future.drop-writable (param i32)))
    (import "" "future.write" (func $future.write (param i32 i32) (result i32)))
    (import "" "mem" (memory 1))

    (global $top (mut i32) (i32.const 0))
    (global $last-top (mut i32) (i32.const 0))
    (global $ws (mut i32) (i32.const 0))

    (func $see (param $h i32) (result i32)
      (if (i32.gt_u (local.get $h) (global.get $top))
        (then (global.set $top (local.get $h))))
      (local.get $h))

    (func $finish (result i32)
      (global.set $last-top (global.get $top))
      (call $task.return)
      (i32.const 0 (; EXIT ;)))

    (func (export "churn") (result i32)
      (local $p i64) (local $r i32) (local $st i32)
      (global.set $top (i32.const 0))
      (call $waitable-set.drop (call $see (call $waitable-set.new)))

      (local.set $p (call $stream.new))
      (call $stream.drop-readable
            (call $see (i32.wrap_i64 (local.get $p))))
      (call $stream.drop-writable
            (call $see (i32.wrap_i64 (i64.shr_u (local.get $p)
                                                (i64.const 32)))))
      ;; a writer drops its end only after writing: with the reader
      ;; gone, the write answers DROPPED (1) at once
      (local.set $p (call $future.new))
      (call $future.drop-readable
            (call $see (i32.wrap_i64 (local.get $p))))
      (local.set $st (call $see (i32.wrap_i64 (i64.shr_u (local.get $p)
                                                      (i64.const 32)))))
      (if (i32.ne (call $future.write (local.get $st) (i32.const 0))
                  (i32.const 1 (; DROPPED ;)))
        (then unreachable))
      (call $future.drop-writable (local.get $st))

      (local.set $r (call $wait-for (i64.const 3600000000000 (; 1 h ;))))
      (if (i32.ne (i32.and (local.get $r) (i32.const 0xf))
                  (i32.const 1 (; STARTED ;)))
        (then unreachable))
      (local.set $st (call $see (i32.shr_u (local.get $r) (i32.const 4))))
      (local.set $r (call $subtask.cancel (local.get $st)))
      (if (i32.ne (local.get $r) (i32.const -1 (; BLOCKED ;)))
        (then
          ;; resolved at once: cancelled before it returned
          (if (i32.ne (local.get $r) (i32.const 4))
            (then unreachable))
          (call $subtask.drop (local.get $st))
          (return (call $finish))))
      (global.set $ws (call $see (call $waitable-set.new)))
      (call $waitable.join (local.get $st) (global.get $ws))
      (i32.or (i32.const 2 (; WAIT ;))
              (i32.shl (global.get $ws) (i32.const 4))))

    (func (export "churn-cb") (param $event i32) (param $index i32)
                              (param $payload i32) (result i32)
      (if (i32.ne (local.get $event) (i32.const 1 (; SUBTASK ;)))
        (then unreachable))
      (if (i32.ne (local.get $payload)
                  (i32.const 4 (; CANCELLED_BEFORE_RETURNED ;)))
        (then unreachable))
      (call $subtask.drop (local.get $index))
      (call $waitable-set.drop (global.get $ws))
      (call $finish))

    (func (export "top-handle") (result i32) (global.get $last-top))
  )

  (canon task.return (core func $task.return))
  (canon lower (func $clock "wait-for") async (core func $wait-for))
  (canon waitable-set.new (core func $waitable-set.new))
  (canon waitable-set.drop (core func $waitable-set.drop))
  (canon waitable.join (core func $waitable.join))
  (canon subtask.drop (core func $subtask.drop))
  (canon subtask.cancel async (core func $subtask.cancel))
  (canon stream.new $bytes (core func $stream.new))
  (canon stream.drop-readable $bytes (core func $stream.drop-readable))
  (canon stream.drop-writable $bytes (core func $stream.drop-writable))
  (canon future.new $later (core func $future.new))
  (canon future.drop-readable $later (core func $future.drop-readable))
  (canon future.drop-writable $later (core func $future.drop-writable))
  (canon future.write $later async (memory (core memory $memory "mem"))
    (core func $future.write))
  (core instance $churn (instantiate $Churn (with "" (instance
    (export "task.return" (func $task.return))
    (export "wait-for" (func $wait-for))
    (export "waitable-set.new" (func $waitable-set.new))
    (export "waitable-set.drop" (func $waitable-set.drop))
    (export "waitable.join" (func $waitable.join))
    (export "subtask.drop" (func $subtask.drop))
    (export "subtask.cancel" (func $subtask.cancel))
    (export "stream.new" (func $stream.new))
    (export "stream.drop-readable" (func $stream.drop-readable))
    (export "stream.drop-writable" (func $stream.drop-writable))
    (export "future.new" (func $future.new))
    (export "future.drop-readable" (func $future.drop-readable))
    (export "future.drop-writable" (func $future.drop-writable))
    (export "future.write" (func $future.write))
    (export "mem" (memory $memory "mem"))
  ))))

  (func (export "churn") async (canon lift (core func $churn "churn")
    async (callback (core func $churn "churn-cb"))))
  (func (export "top-handle") (result u32)
    (canon lift (core func $churn "top-handle")))
)
