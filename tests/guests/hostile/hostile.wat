;; hostile.wat - a guest that does everything a guest should not, one
;; export per misdeed, for the per-store limits (tests/unit/run/test_limits.c)
;; and the hostile-guest daemon test (tests/daemon-hostile.sh, issue 9
;; point 4).  Each misdeed must end in a clean trap (or, for memory, a
;; failed memory.grow), never in the host growing without bound.
;;
;;   import wasi:clocks/monotonic-clock@0.3.0 { wait-for }
;;   export ping: func() -> u32         counts its calls (the store lives)
;;   export spin: func()                loops for ever (fuel stops it)
;;   export grow: func() -> u32         memory.grow 16 pages at a time,
;;       touching each, until it answers -1; returns memory.size in pages
;;   export recurse: func(n: u32) -> u32  recurses without end
;;   export streams: func()             stream.new for ever, never drops
;;   export sets: func()                waitable-set.new for ever
;;   export subtasks: async func()      wait-for(1 h) for ever, never
;;       cancels: a pending host call and a subtask handle each time
;;   export threads: func()             thread.new-indirect for ever,
;;       never starts one: each a suspended thread with its own stack
;;   export boom: func()                unreachable (the trap storm)
;;   export tables: func() -> u32       table.grow 10,000 at a time until
;;       it answers -1; returns table.size
;;   export throws: func(n: u32) -> u32 throws and catches n exceptions,
;;       keeping none: the engine must collect them; returns n
;;   export spin-catch: func()          throws for ever, each caught by a
;;       try_table whose label is its loop's: no branch op ever runs, so
;;       the throw's own fuel stops it
;;
;; Regenerate hostile.wasm: tests/guests/build.sh wat.
(component
  (import "wasi:clocks/monotonic-clock@0.3.0" (instance $clock
    (export "wait-for" (func async (param "how-long" u64)))
  ))
  (type $bytes (stream u8))

  (core module $Table
    (table (export "threads") 1 funcref))
  (core instance $table (instantiate $Table))

  (core module $Hostile
    (import "" "task.return" (func $task.return))
    (import "" "wait-for" (func $wait-for (param i64) (result i32)))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "stream.new" (func $stream.new (result i64)))
    (import "" "thread.new-indirect"
      (func $thread.new-indirect (param i32 i32) (result i32)))
    (import "" "threads" (table $threads 1 funcref))
    (memory (export "mem") 1)

    (func $thread-start (param i32))
    (elem (table $threads) (i32.const 0) func $thread-start)

    (global $pings (mut i32) (i32.const 0))

    (func (export "ping") (result i32)
      (global.set $pings (i32.add (global.get $pings) (i32.const 1)))
      (global.get $pings))

    (func (export "spin")
      (loop $l (br $l)))

    ;; and writes to every page it got, so the host must really back it
    (func (export "grow") (result i32)
      (local $old i32) (local $p i32)
      (block $full
        (loop $l
          (local.set $old (memory.grow (i32.const 16)))
          (br_if $full (i32.eq (local.get $old) (i32.const -1)))
          (local.set $p (i32.mul (local.get $old) (i32.const 65536)))
          (loop $touch
            (i32.store8 (local.get $p) (i32.const 1))
            (local.set $p (i32.add (local.get $p) (i32.const 4096)))
            (br_if $touch (i32.lt_u (local.get $p)
                                    (i32.mul (memory.size)
                                             (i32.const 65536)))))
          (br $l)))
      (memory.size))

    (tag $thrown (param i32))
    (func (export "throws") (param $n i32) (result i32)
      (local $i i32)
      (block $done
        (loop $l
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (block $caught
            (try_table (catch_all $caught)
              (throw $thrown (local.get $i))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l)))
      (local.get $i))

    (tag $again)
    (func (export "spin-catch")
      (loop $l
        (try_table (catch $again $l) (throw $again))))

    (func $recurse (export "recurse") (param $n i32) (result i32)
      (i32.add (call $recurse (i32.add (local.get $n) (i32.const 1)))
               (i32.const 1)))

    (func (export "streams")
      (loop $l
        (drop (call $stream.new))
        (br $l)))

    (func (export "sets")
      (loop $l
        (drop (call $waitable-set.new))
        (br $l)))

    (func (export "threads")
      (loop $l
        (drop (call $thread.new-indirect (i32.const 0) (i32.const 0)))
        (br $l)))

    (func (export "subtasks") (result i32)
      (loop $l
        (drop (call $wait-for (i64.const 3600000000000 (; 1 h ;))))
        (br $l))
      (call $task.return)
      (i32.const 0 (; EXIT ;)))

    (func (export "subtasks-cb") (param i32 i32 i32) (result i32)
      unreachable)

    (func (export "boom")
      unreachable)

    ;; table.grow by 10,000 non-null references at a time (each one
    ;; written, so the host really backs them) until it answers -1
    (func (export "tables") (result i32)
      (block $full
        (loop $l
          (br_if $full (i32.eq (table.grow $threads (ref.func $thread-start)
                                           (i32.const 10000))
                               (i32.const -1)))
          (br $l)))
      (table.size $threads))
  )

  (canon task.return (core func $task.return))
  (canon lower (func $clock "wait-for") async (core func $wait-for))
  (canon waitable-set.new (core func $waitable-set.new))
  (canon stream.new $bytes (core func $stream.new))
  (core type $thread-start (func (param i32)))
  (alias core export $table "threads" (core table $threads))
  (core func $thread.new-indirect
    (canon thread.new-indirect $thread-start (core table $threads)))
  (core instance $hostile (instantiate $Hostile (with "" (instance
    (export "task.return" (func $task.return))
    (export "wait-for" (func $wait-for))
    (export "waitable-set.new" (func $waitable-set.new))
    (export "stream.new" (func $stream.new))
    (export "thread.new-indirect" (func $thread.new-indirect))
    (export "threads" (table $threads))
  ))))

  (func (export "ping") (result u32)
    (canon lift (core func $hostile "ping")))
  (func (export "spin") (canon lift (core func $hostile "spin")))
  (func (export "grow") (result u32)
    (canon lift (core func $hostile "grow")))
  (func (export "recurse") (param "n" u32) (result u32)
    (canon lift (core func $hostile "recurse")))
  (func (export "streams") (canon lift (core func $hostile "streams")))
  (func (export "sets") (canon lift (core func $hostile "sets")))
  (func (export "threads") (canon lift (core func $hostile "threads")))
  (func (export "subtasks") async (canon lift (core func $hostile "subtasks")
    async (callback (core func $hostile "subtasks-cb"))))
  (func (export "boom") (canon lift (core func $hostile "boom")))
  (func (export "tables") (result u32)
    (canon lift (core func $hostile "tables")))
  (func (export "throws") (param "n" u32) (result u32)
    (canon lift (core func $hostile "throws")))
  (func (export "spin-catch")
    (canon lift (core func $hostile "spin-catch")))
)
