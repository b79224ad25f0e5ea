;; async64.wat - the async built-ins over a 64-bit memory (issue 21
;; point 6; tests/mem64.sh): every pointer a built-in takes is i64 when
;; its memory is, and the buffers here sit above 2^32 (the memory is
;; grown to 65,537 pages first: only what is touched costs).
;;
;;   stream-event: async func() -> string
;;       stream.write of "ping" at 2^32 blocks; stream.read into 2^32 +
;;       16 completes it (the copy's count comes back as an i64); a
;;       waitable-set.wait with its event record at 2^32 + 32 gets the
;;       writer's STREAM_WRITE event, (its handle, 4 copied); task.return
;;       (memory64: the string is (i64, i64)) returns what was read, or
;;       "bad ..." naming the first check that failed
;;   thread-arg: async func() -> u64
;;       thread.new-indirect of a [i64] -> [] start function with the
;;       argument 2^32 + 0x2345_6789 (through the table), resumed; the
;;       started thread keeps its argument, task.return gives it back
;;   poll-high: async func() -> u32
;;       waitable-set.poll with its record at the memory's last 8 bytes
;;       (an empty set: code NONE), and a second at 2^64 - 4: traps
;;       "out of bounds" (the check must not wrap)
;;
;; Regenerate async64.wasm: tests/guests/build.sh wat.
(component
  (type $bytes (stream u8))
  (core module $Libc
    (memory (export "mem") i64 1)
    (table (export "tbl") 1 funcref))
  (core instance $libc (instantiate $Libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "tbl" (core table $tbl))
  (core type $start-ty (func (param i64)))

  (core func $stream.new (canon stream.new $bytes))
  (core func $stream.read (canon stream.read $bytes async (memory $mem)))
  (core func $stream.write (canon stream.write $bytes async (memory $mem)))
  (core func $waitable-set.new (canon waitable-set.new))
  (core func $waitable.join (canon waitable.join))
  (core func $waitable-set.wait (canon waitable-set.wait (memory $mem)))
  (core func $waitable-set.poll (canon waitable-set.poll (memory $mem)))
  (core func $task.return-string (canon task.return (result string) (memory $mem)))
  (core func $task.return-u64 (canon task.return (result u64)))
  (core func $task.return-u32 (canon task.return (result u32)))
  (core func $thread.new-indirect
    (canon thread.new-indirect $start-ty (core table $tbl)))
  (core func $thread.resume-later (canon thread.resume-later))
  (core func $thread.yield (canon thread.yield))

  (core module $M
    (import "" "mem" (memory i64 1))
    (import "" "tbl" (table 1 funcref))
    (import "" "stream.new" (func $stream.new (result i64)))
    (import "" "stream.read" (func $stream.read (param i32 i64 i64) (result i64)))
    (import "" "stream.write" (func $stream.write (param i32 i64 i64) (result i64)))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable.join" (func $waitable.join (param i32 i32)))
    (import "" "waitable-set.wait" (func $waitable-set.wait (param i32 i64) (result i32)))
    (import "" "waitable-set.poll" (func $waitable-set.poll (param i32 i64) (result i32)))
    (import "" "task.return-string" (func $task.return-string (param i64 i64)))
    (import "" "task.return-u64" (func $task.return-u64 (param i64)))
    (import "" "task.return-u32" (func $task.return-u32 (param i32)))
    (import "" "thread.new-indirect" (func $thread.new-indirect (param i32 i64) (result i32)))
    (import "" "thread.resume-later" (func $thread.resume-later (param i32)))
    (import "" "thread.yield" (func $thread.yield (result i32)))
    (global $kept (mut i64) (i64.const 0))
    (elem (table 0) (i32.const 0) func $keep)
    (data (i64.const 256) "bad grow" "bad write" "bad read" "bad wait" "bad event")

    (func $keep (param i64) (global.set $kept (local.get 0)))
    (func $fail (param $at i64) (param $n i64)
      (call $task.return-string (i64.add (i64.const 256) (local.get $at)) (local.get $n)))
    ;; the memory past 4 GiB: 65,537 pages
    (func $grow (result i32)
      (i64.ne (memory.grow (i64.const 65536)) (i64.const -1)))

    (func (export "stream-event")
      (local $s i64) (local $r i32) (local $w i32) (local $ws i32)
      (local $hi i64)
      (local.set $hi (i64.const 0x1_0000_0000))
      (if (i32.eqz (call $grow))
        (then (call $fail (i64.const 0) (i64.const 8)) (return)))
      (i32.store (local.get $hi) (i32.const 0x676e6970)) ;; "ping"
      (local.set $s (call $stream.new))
      (local.set $r (i32.wrap_i64 (local.get $s)))
      (local.set $w (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))
      ;; no reader yet: BLOCKED, all 64 bits set
      (if (i64.ne (call $stream.write (local.get $w) (local.get $hi) (i64.const 4))
                  (i64.const -1))
        (then (call $fail (i64.const 8) (i64.const 9)) (return)))
      ;; the reader completes the copy: 4 copied, COMPLETED
      (if (i64.ne (call $stream.read (local.get $r)
                    (i64.add (local.get $hi) (i64.const 16)) (i64.const 4))
                  (i64.const 0x40))
        (then (call $fail (i64.const 17) (i64.const 8)) (return)))
      (local.set $ws (call $waitable-set.new))
      (call $waitable.join (local.get $w) (local.get $ws))
      ;; STREAM_WRITE (3), the record above 2^32
      (if (i32.ne (call $waitable-set.wait (local.get $ws)
                    (i64.add (local.get $hi) (i64.const 32)))
                  (i32.const 3))
        (then (call $fail (i64.const 25) (i64.const 8)) (return)))
      (if (i32.or
            (i32.ne (i32.load (i64.add (local.get $hi) (i64.const 32))) (local.get $w))
            (i32.ne (i32.load (i64.add (local.get $hi) (i64.const 36))) (i32.const 0x40)))
        (then (call $fail (i64.const 33) (i64.const 9)) (return)))
      (call $task.return-string (i64.add (local.get $hi) (i64.const 16)) (i64.const 4)))

    (func (export "thread-arg")
      (local $t i32)
      (local.set $t (call $thread.new-indirect (i32.const 0) (i64.const 0x1_2345_6789)))
      (call $thread.resume-later (local.get $t))
      (block $done
        (loop $wait
          (br_if $done (i64.ne (global.get $kept) (i64.const 0)))
          (drop (call $thread.yield))
          (br $wait)))
      (call $task.return-u64 (global.get $kept)))

    (func (export "poll-high")
      (local $ws i32)
      (local.set $ws (call $waitable-set.new))
      (if (i32.ne (call $waitable-set.poll (local.get $ws)
                    (i64.sub (i64.shl (memory.size) (i64.const 16)) (i64.const 8)))
                  (i32.const 0))
        (then (call $task.return-u32 (i32.const 1)) (return)))
      (drop (call $waitable-set.poll (local.get $ws) (i64.const -4)))
      (call $task.return-u32 (i32.const 2))))

  (core instance $m (instantiate $M
    (with "" (instance
      (export "mem" (memory $mem))
      (export "tbl" (table $tbl))
      (export "stream.new" (func $stream.new))
      (export "stream.read" (func $stream.read))
      (export "stream.write" (func $stream.write))
      (export "waitable-set.new" (func $waitable-set.new))
      (export "waitable.join" (func $waitable.join))
      (export "waitable-set.wait" (func $waitable-set.wait))
      (export "waitable-set.poll" (func $waitable-set.poll))
      (export "task.return-string" (func $task.return-string))
      (export "task.return-u64" (func $task.return-u64))
      (export "task.return-u32" (func $task.return-u32))
      (export "thread.new-indirect" (func $thread.new-indirect))
      (export "thread.resume-later" (func $thread.resume-later))
      (export "thread.yield" (func $thread.yield))))))

  (func (export "stream-event") async (result string)
    (canon lift (core func $m "stream-event") async (memory $mem)))
  (func (export "thread-arg") async (result u64)
    (canon lift (core func $m "thread-arg") async))
  (func (export "poll-high") async (result u32)
    (canon lift (core func $m "poll-high") async)))
