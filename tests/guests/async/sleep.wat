;; sleep.wat - an async export waiting on the WASI 0.3 monotonic clock,
;; and the async form of wasi:cli/run (0.3.0).
;;
;;   export sleep: async func(ms: u32) -> u64   waits ms milliseconds
;;       (wait-for), returns the nanoseconds that passed by the guest's
;;       clock (now after - now before)
;;   export sleep-until: async func(when: u64) -> u64   wait-until, then
;;       returns now
;;   export clock-info: func() -> tuple<u64, s64, u32, u64>   the
;;       monotonic clock's resolution, system-clock now (seconds,
;;       nanoseconds) and its resolution
;;   export wasi:cli/run@0.3.0 { run: async func() -> result }
;;       waits 10 ms, returns ok
;;
;; Each call keeps its state (start time, waitable set) in its task's
;; context slot 0, so concurrent calls do not mix: the slot points at a
;; 16-byte record in linear memory (bump-allocated, never reused; the
;; guest is a test, not a long-lived service).
;;
;; Regenerate sleep.wasm: tests/guests/build.sh (jco parse; jco wit
;; validates).
(component
  (import "wasi:clocks/monotonic-clock@0.3.0" (instance $clock
    (export "now" (func (result u64)))
    (export "wait-for" (func async (param "how-long" u64)))
    (export "wait-until" (func async (param "when" u64)))
    (export "get-resolution" (func (result u64)))
  ))
  (import "wasi:clocks/system-clock@0.3.0" (instance $system
    (type $instant (record (field "seconds" s64) (field "nanoseconds" u32)))
    (export "instant" (type $instant' (eq $instant)))
    (export "now" (func (result $instant')))
    (export "get-resolution" (func (result u64)))
  ))
  (alias export $system "instant" (type $instant))
  (type $clock-info (tuple u64 s64 u32 u64))

  (core module $Memory (memory (export "mem") 1))
  (core instance $memory (instantiate $Memory))

  (core module $Sleep
    (import "" "now" (func $now (result i64)))
    (import "" "wait-for" (func $wait-for (param i64) (result i32)))
    (import "" "wait-until" (func $wait-until (param i64) (result i32)))
    (import "" "mono-resolution" (func $mono-resolution (result i64)))
    (import "" "system-now" (func $system-now (param i32)))
    (import "" "system-resolution" (func $system-resolution (result i64)))
    (import "" "task.return.u64" (func $return-u64 (param i64)))
    (import "" "task.return.run" (func $return-run (param i32)))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable-set.drop" (func $waitable-set.drop (param i32)))
    (import "" "waitable.join" (func $waitable.join (param i32 i32)))
    (import "" "subtask.drop" (func $subtask.drop (param i32)))
    (import "" "context.get" (func $context.get (result i32)))
    (import "" "context.set" (func $context.set (param i32)))
    (import "" "mem" (memory 1))
    ;; 0..15: system-now's record; 16..31: clock-info's tuple; then records
    (global $next (mut i32) (i32.const 64))

    ;; Start waiting (ns, or until the deadline ns when $until); the
    ;; callback code.  Record: +0 start (i64), +8 waitable set (i32).
    (func $begin (param $ns i64) (param $until i32) (result i32)
      (local $rec i32) (local $r i32) (local $ws i32)
      (local.set $rec (global.get $next))
      (global.set $next (i32.add (global.get $next) (i32.const 16)))
      (if (i32.gt_u (global.get $next) (i32.const 65536))
        (then unreachable))
      (call $context.set (local.get $rec))
      (i64.store (local.get $rec) (call $now))
      (if (local.get $until)
        (then (local.set $r (call $wait-until (local.get $ns))))
        (else (local.set $r (call $wait-for (local.get $ns)))))
      (if (i32.eq (i32.and (local.get $r) (i32.const 0xf))
                  (i32.const 2 (; RETURNED ;)))
        (then (return (i32.const 1 (; YIELD ;)))))
      (local.set $ws (call $waitable-set.new))
      (i32.store offset=8 (local.get $rec) (local.get $ws))
      (call $waitable.join (i32.shr_u (local.get $r) (i32.const 4))
                           (local.get $ws))
      (i32.or (i32.const 2 (; WAIT ;))
              (i32.shl (local.get $ws) (i32.const 4))))

    ;; The wait is over (SUBTASK RETURNED, or NONE after a YIELD).
    (func $end (param $event i32) (param $index i32) (param $payload i32)
               (result i64)
      (local $rec i32)
      (local.set $rec (call $context.get))
      (if (i32.eq (local.get $event) (i32.const 1 (; SUBTASK ;)))
        (then
          (if (i32.ne (local.get $payload) (i32.const 2 (; RETURNED ;)))
            (then unreachable))
          (call $subtask.drop (local.get $index))
          (call $waitable-set.drop
                (i32.load offset=8 (local.get $rec))))
        (else
          (if (i32.ne (local.get $event) (i32.const 0 (; NONE ;)))
            (then unreachable))))
      (i64.sub (call $now) (i64.load (local.get $rec))))

    (func (export "sleep") (param $ms i32) (result i32)
      (call $begin (i64.mul (i64.extend_i32_u (local.get $ms))
                            (i64.const 1000000))
                   (i32.const 0)))
    (func (export "sleep-cb") (param i32 i32 i32) (result i32)
      (call $return-u64 (call $end (local.get 0) (local.get 1)
                                   (local.get 2)))
      (i32.const 0 (; EXIT ;)))

    (func (export "sleep-until") (param $when i64) (result i32)
      (call $begin (local.get $when) (i32.const 1)))
    (func (export "sleep-until-cb") (param i32 i32 i32) (result i32)
      (drop (call $end (local.get 0) (local.get 1) (local.get 2)))
      (call $return-u64 (call $now))
      (i32.const 0 (; EXIT ;)))

    (func (export "clock-info") (result i32)
      (call $system-now (i32.const 0))
      (i64.store (i32.const 16) (call $mono-resolution))
      (i64.store (i32.const 24) (i64.load (i32.const 0)))
      (i32.store (i32.const 32) (i32.load (i32.const 8)))
      (i64.store (i32.const 40) (call $system-resolution))
      (i32.const 16))

    (func (export "run") (result i32)
      (call $begin (i64.const 10000000 (; 10 ms ;)) (i32.const 0)))
    (func (export "run-cb") (param i32 i32 i32) (result i32)
      (drop (call $end (local.get 0) (local.get 1) (local.get 2)))
      (call $return-run (i32.const 0 (; ok ;)))
      (i32.const 0 (; EXIT ;)))
  )

  (type $run-result (result))
  (canon lower (func $clock "now") (core func $now))
  (canon lower (func $clock "wait-for") async (core func $wait-for))
  (canon lower (func $clock "wait-until") async (core func $wait-until))
  (canon lower (func $clock "get-resolution") (core func $mono-resolution))
  (canon lower (func $system "now") (memory (core memory $memory "mem"))
    (core func $system-now))
  (canon lower (func $system "get-resolution")
    (core func $system-resolution))
  (canon task.return (result u64) (core func $return-u64))
  (canon task.return (result $run-result) (core func $return-run))
  (canon waitable-set.new (core func $waitable-set.new))
  (canon waitable-set.drop (core func $waitable-set.drop))
  (canon waitable.join (core func $waitable.join))
  (canon subtask.drop (core func $subtask.drop))
  (canon context.get i32 0 (core func $context.get))
  (canon context.set i32 0 (core func $context.set))
  (core instance $sleep (instantiate $Sleep (with "" (instance
    (export "now" (func $now))
    (export "wait-for" (func $wait-for))
    (export "wait-until" (func $wait-until))
    (export "mono-resolution" (func $mono-resolution))
    (export "system-now" (func $system-now))
    (export "system-resolution" (func $system-resolution))
    (export "mem" (memory $memory "mem"))
    (export "task.return.u64" (func $return-u64))
    (export "task.return.run" (func $return-run))
    (export "waitable-set.new" (func $waitable-set.new))
    (export "waitable-set.drop" (func $waitable-set.drop))
    (export "waitable.join" (func $waitable.join))
    (export "subtask.drop" (func $subtask.drop))
    (export "context.get" (func $context.get))
    (export "context.set" (func $context.set))
  ))))

  (func (export "sleep") async (param "ms" u32) (result u64)
    (canon lift (core func $sleep "sleep")
      async (callback (core func $sleep "sleep-cb"))))

  (func (export "sleep-until") async (param "when" u64) (result u64)
    (canon lift (core func $sleep "sleep-until")
      async (callback (core func $sleep "sleep-until-cb"))))
  (func (export "clock-info") (result $clock-info)
    (canon lift (core func $sleep "clock-info")
      (memory (core memory $memory "mem"))))

  (func $run async (result $run-result)
    (canon lift (core func $sleep "run")
      async (callback (core func $sleep "run-cb"))))
  (instance $run-instance (export "run" (func $run)))
  (export "wasi:cli/run@0.3.0" (instance $run-instance))
)
