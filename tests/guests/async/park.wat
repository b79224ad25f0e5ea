;; park.wat - a background task parked on an async host import, for the
;; between-calls liveness test (tests/unit/run/test_liveness.c, issue 5).
;;
;;   import hostel:test/host { park: async func(x: u32) -> u32 }
;;   export start: async func(x: u32)  returns at once (task.return), then
;;       keeps its task alive waiting on park(x); when the host settles
;;       park, the callback stores the result and the task exits
;;   export state: func() -> u32      0 idle, 1 parked, 2 done
;;   export value: func() -> u32      park's result once done
;;
;; Regenerate park.wasm: tests/guests/build.sh (jco parse; jco wit
;; validates).
(component
  (import "hostel:test/host" (instance $host
    (export "park" (func async (param "x" u32) (result u32)))
  ))

  (core module $Memory (memory (export "mem") 1))
  (core instance $memory (instantiate $Memory))

  (core module $Park
    (import "" "mem" (memory 1))
    (import "" "task.return" (func $task.return))
    (import "" "park" (func $park (param i32 i32) (result i32)))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable-set.drop" (func $waitable-set.drop (param i32)))
    (import "" "waitable.join" (func $waitable.join (param i32 i32)))
    (import "" "subtask.drop" (func $subtask.drop (param i32)))

    (global $state (mut i32) (i32.const 0))
    (global $value (mut i32) (i32.const 0))
    (global $ws (mut i32) (i32.const 0))

    (func (export "start") (param $x i32) (result i32)
      (local $r i32)
      (call $task.return)
      ;; park's result goes to address 0
      (local.set $r (call $park (local.get $x) (i32.const 0)))
      (if (i32.eq (i32.and (local.get $r) (i32.const 0xf))
                  (i32.const 2 (; RETURNED ;)))
        (then
          (global.set $value (i32.load (i32.const 0)))
          (global.set $state (i32.const 2))
          (return (i32.const 0 (; EXIT ;)))))
      (global.set $state (i32.const 1))
      (global.set $ws (call $waitable-set.new))
      (call $waitable.join (i32.shr_u (local.get $r) (i32.const 4))
                           (global.get $ws))
      (i32.or (i32.const 2 (; WAIT ;))
              (i32.shl (global.get $ws) (i32.const 4))))

    (func (export "start-cb") (param $event i32) (param $index i32)
                              (param $payload i32) (result i32)
      (if (i32.ne (local.get $event) (i32.const 1 (; SUBTASK ;)))
        (then unreachable))
      (if (i32.ne (local.get $payload) (i32.const 2 (; RETURNED ;)))
        (then unreachable))
      (call $subtask.drop (local.get $index))
      (call $waitable-set.drop (global.get $ws))
      (global.set $value (i32.load (i32.const 0)))
      (global.set $state (i32.const 2))
      (i32.const 0 (; EXIT ;)))

    (func (export "state") (result i32) (global.get $state))
    (func (export "value") (result i32) (global.get $value))
  )

  (canon task.return (core func $task.return))
  (canon lower (func $host "park") async
    (memory (core memory $memory "mem")) (core func $park))
  (canon waitable-set.new (core func $waitable-set.new))
  (canon waitable-set.drop (core func $waitable-set.drop))
  (canon waitable.join (core func $waitable.join))
  (canon subtask.drop (core func $subtask.drop))
  (core instance $park (instantiate $Park (with "" (instance
    (export "mem" (memory $memory "mem"))
    (export "task.return" (func $task.return))
    (export "park" (func $park))
    (export "waitable-set.new" (func $waitable-set.new))
    (export "waitable-set.drop" (func $waitable-set.drop))
    (export "waitable.join" (func $waitable.join))
    (export "subtask.drop" (func $subtask.drop))
  ))))

  (func (export "start") async (param "x" u32)
    (canon lift (core func $park "start")
      async (callback (core func $park "start-cb"))))
  (func (export "state") (result u32) (canon lift (core func $park "state")))
  (func (export "value") (result u32) (canon lift (core func $park "value")))
)
