;; traps.wat - one export per Component Model trap a guest can cause that
;; neither official suite's texts nor another test of ours triggers
;; (issue 21 point 5: each message of docs/traps.md in a test that
;; triggers it).  tests/traps-guest.sh calls each under `hostel run
;; --invoke` and wants its message.
;;
;;   bad-utf8: func() -> string         lifts "a\ff" (invalid at 1)
;;   short-utf8: func() -> string       lifts "a\e2\82" (cut at 1)
;;   bad-utf16: func() -> string        lifts u+d800 alone (utf16)
;;   return-twice: async func()         task.return, then again
;;   return-in-sync: func()             task.return in a sync task
;;   cancel-in-sync: func()             task.cancel in a sync task
;;   bad-callback-code: async func()    its first code is 7
;;   no-result: async func() -> u32     EXIT without task.return
;;   join-set: func()                   waitable.join of a set itself
;;   backpressure-overflow: func()      backpressure.inc 65,536 times
;;   read-other-type: func()            stream.read of a stream<u32>
;;                                      end through a stream<u8> read
;;   count-too-large: func()            stream.read of 2^28 elements
;;   cancel-idle: func()                stream.cancel-read, no copy
;;   read-oob: func()                   stream.read past the memory
;;   resume-running: func()             thread.resume-later of itself
;;   lift-busy: async func() -> stream<u8>
;;                                      returns an end with a read on
;;
;; Regenerate traps.wasm: tests/guests/build.sh wat.
(component
  (type $bytes (stream u8))
  (type $words (stream u32))

  (core module $Memory
    (memory (export "mem") 1)
    (data (i32.const 0) "a\ff")
    (data (i32.const 16) "a\e2\82")
    (data (i32.const 32) "\00\d8"))
  (core instance $memory (instantiate $Memory))

  (core module $Traps
    (import "" "mem" (memory 1))
    (import "" "task.return" (func $task.return))
    (import "" "task.return-u32" (func $task.return-u32 (param i32)))
    (import "" "task.return-bytes" (func $task.return-bytes (param i32)))
    (import "" "task.cancel" (func $task.cancel))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable.join" (func $waitable.join (param i32 i32)))
    (import "" "backpressure.inc" (func $backpressure.inc))
    (import "" "stream.new" (func $stream.new (result i64)))
    (import "" "stream.new-words" (func $stream.new-words (result i64)))
    (import "" "stream.read" (func $stream.read (param i32 i32 i32) (result i32)))
    (import "" "stream.cancel-read" (func $stream.cancel-read (param i32) (result i32)))
    (import "" "thread.index" (func $thread.index (result i32)))
    (import "" "thread.resume-later" (func $thread.resume-later (param i32)))

    ;; a string's (pointer, length) in a return area at 64
    (func $str (param $p i32) (param $n i32) (result i32)
      (i32.store (i32.const 64) (local.get $p))
      (i32.store (i32.const 68) (local.get $n))
      (i32.const 64))
    (func (export "bad-utf8") (result i32) (call $str (i32.const 0) (i32.const 2)))
    (func (export "short-utf8") (result i32) (call $str (i32.const 16) (i32.const 3)))
    ;; utf16: the length counts code units
    (func (export "bad-utf16") (result i32) (call $str (i32.const 32) (i32.const 1)))

    (func (export "return-twice")
      (call $task.return)
      (call $task.return))
    (func (export "return-in-sync") (call $task.return))
    (func (export "cancel-in-sync") (call $task.cancel))
    (func (export "bad-callback-code") (result i32) (i32.const 7))
    (func (export "no-result") (result i32) (i32.const 0 (; EXIT ;)))
    (func (export "unused-cb") (param i32 i32 i32) (result i32)
      (i32.const 0))

    (func (export "join-set")
      (local $ws i32)
      (local.set $ws (call $waitable-set.new))
      (call $waitable.join (local.get $ws) (local.get $ws)))
    (func (export "backpressure-overflow")
      (loop $l
        (call $backpressure.inc)
        (br $l)))

    (func $readable (param $p i64) (result i32) (i32.wrap_i64 (local.get $p)))
    (func (export "read-other-type")
      (drop (call $stream.read
        (call $readable (call $stream.new-words)) (i32.const 128) (i32.const 1))))
    (func (export "count-too-large")
      (drop (call $stream.read
        (call $readable (call $stream.new)) (i32.const 128)
        (i32.const 0x10000000))))
    (func (export "cancel-idle")
      (drop (call $stream.cancel-read (call $readable (call $stream.new)))))
    (func (export "read-oob")
      (drop (call $stream.read
        (call $readable (call $stream.new)) (i32.const 65500) (i32.const 100))))
    (func (export "resume-running")
      (call $thread.resume-later (call $thread.index)))
    (func (export "lift-busy") (result i32)
      (local $r i32)
      (local.set $r (call $readable (call $stream.new)))
      ;; no writer has written: BLOCKED, the end is busy
      (if (i32.ne (call $stream.read (local.get $r) (i32.const 128) (i32.const 4))
                  (i32.const -1))
        (then unreachable))
      (call $task.return-bytes (local.get $r))
      (i32.const 0 (; EXIT ;)))
  )

  (canon task.return (core func $task.return))
  (canon task.return (result u32) (core func $task.return-u32))
  (canon task.return (result $bytes) (core func $task.return-bytes))
  (canon task.cancel (core func $task.cancel))
  (canon waitable-set.new (core func $waitable-set.new))
  (canon waitable.join (core func $waitable.join))
  (canon backpressure.inc (core func $backpressure.inc))
  (canon stream.new $bytes (core func $stream.new))
  (canon stream.new $words (core func $stream.new-words))
  (canon stream.read $bytes async (memory (core memory $memory "mem"))
    (core func $stream.read))
  (canon stream.cancel-read $bytes async (core func $stream.cancel-read))
  (canon thread.index (core func $thread.index))
  (canon thread.resume-later (core func $thread.resume-later))
  (core instance $traps (instantiate $Traps (with "" (instance
    (export "mem" (memory $memory "mem"))
    (export "task.return" (func $task.return))
    (export "task.return-u32" (func $task.return-u32))
    (export "task.return-bytes" (func $task.return-bytes))
    (export "task.cancel" (func $task.cancel))
    (export "waitable-set.new" (func $waitable-set.new))
    (export "waitable.join" (func $waitable.join))
    (export "backpressure.inc" (func $backpressure.inc))
    (export "stream.new" (func $stream.new))
    (export "stream.new-words" (func $stream.new-words))
    (export "stream.read" (func $stream.read))
    (export "stream.cancel-read" (func $stream.cancel-read))
    (export "thread.index" (func $thread.index))
    (export "thread.resume-later" (func $thread.resume-later))
  ))))

  (func (export "bad-utf8") (result string)
    (canon lift (core func $traps "bad-utf8") (memory (core memory $memory "mem"))))
  (func (export "short-utf8") (result string)
    (canon lift (core func $traps "short-utf8") (memory (core memory $memory "mem"))))
  (func (export "bad-utf16") (result string)
    (canon lift (core func $traps "bad-utf16") (memory (core memory $memory "mem"))
      string-encoding=utf16))
  (func (export "return-twice") async
    (canon lift (core func $traps "return-twice") async))
  (func (export "return-in-sync")
    (canon lift (core func $traps "return-in-sync")))
  (func (export "cancel-in-sync")
    (canon lift (core func $traps "cancel-in-sync")))
  (func (export "bad-callback-code") async
    (canon lift (core func $traps "bad-callback-code") async
      (callback (core func $traps "unused-cb"))))
  (func (export "no-result") async (result u32)
    (canon lift (core func $traps "no-result") async
      (callback (core func $traps "unused-cb"))))
  (func (export "join-set") (canon lift (core func $traps "join-set")))
  (func (export "backpressure-overflow")
    (canon lift (core func $traps "backpressure-overflow")))
  (func (export "read-other-type")
    (canon lift (core func $traps "read-other-type")))
  (func (export "count-too-large")
    (canon lift (core func $traps "count-too-large")))
  (func (export "cancel-idle") (canon lift (core func $traps "cancel-idle")))
  (func (export "read-oob") (canon lift (core func $traps "read-oob")))
  (func (export "resume-running")
    (canon lift (core func $traps "resume-running")))
  (func (export "lift-busy") async (result $bytes)
    (canon lift (core func $traps "lift-busy") async
      (callback (core func $traps "unused-cb"))))
)
