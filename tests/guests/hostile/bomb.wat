;; bomb.wat - a guest of a few KB that asks the host to copy some 10^14
;; bytes: one value of nested lists whose elements all point at the
;; same ranges of a 4-page memory (issue 18: the host's work on a
;; guest's behalf is bounded by the store's limits.hostBytes).
;;
;; The inner component $Producer lays out, in its memory:
;;   page 0: 8192 x (ptr 65536, len 8192)    the outer list's elements
;;   page 1: 8192 x (ptr 131072, len 65536)  each a list of 8192 lists
;;   page 2: 65536 bytes                     each innermost list<u8>
;;   196608: (ptr 0, len 8192)               the value itself
;; so the value, a list<list<list<u8>>>, is 8192 x 8192 x 65536 bytes
;; once lifted (each byte a host value of 40 bytes): the host must
;; refuse it before it allocates, not grow until the kernel kills it.
;;
;;   export bomb-stream: func() -> u32   the producer writes the value
;;       into a stream (an async write, pending) and returns the readable
;;       end; the outer component reads it (async read): the copy lifts
;;       the value out of the producer's memory
;;   export bomb-future: func() -> u32   the same through a future
;;   export bomb-result: func() -> list<list<list<u8>>>   the producer
;;       returns the value itself: the host lifts it as the call's result
;;   export bytes-stream: func() -> u32  196608 bytes through a
;;       stream<u8> from the producer: numbers move as bytes, with no
;;       host values (returns the read's COMPLETED | count << 4)
;;   export ping: func() -> u32          counts its calls
;;
;; Regenerate bomb.wasm: tests/guests/build.sh wat.
(component
  (component $Producer
    (type $S (stream (list (list (list u8)))))
    (type $F (future (list (list (list u8)))))
    (type $V (list (list (list u8))))
    (type $B (stream u8))
    (core module $Mem (memory (export "mem") 4))
    (core instance $mem (instantiate $Mem))
    (alias core export $mem "mem" (core memory $memory))
    (core func $stream.new (canon stream.new $S))
    (core func $stream.write (canon stream.write $S async (memory $memory)))
    (core func $future.new (canon future.new $F))
    (core func $future.write (canon future.write $F async (memory $memory)))
    (core func $bytes.new (canon stream.new $B))
    (core func $bytes.write (canon stream.write $B async (memory $memory)))
    (core module $P
      (import "" "mem" (memory 4))
      (import "" "stream.new" (func $stream.new (result i64)))
      (import "" "stream.write"
        (func $stream.write (param i32 i32 i32) (result i32)))
      (import "" "future.new" (func $future.new (result i64)))
      (import "" "future.write" (func $future.write (param i32 i32) (result i32)))
      (import "" "bytes.new" (func $bytes.new (result i64)))
      (import "" "bytes.write"
        (func $bytes.write (param i32 i32 i32) (result i32)))
      (func $fill
        (local $i i32)
        (loop $l
          (i32.store (local.get $i) (i32.const 65536))
          (i32.store offset=4 (local.get $i) (i32.const 8192))
          (i32.store offset=65536 (local.get $i) (i32.const 131072))
          (i32.store offset=65540 (local.get $i) (i32.const 65536))
          (local.set $i (i32.add (local.get $i) (i32.const 8)))
          (br_if $l (i32.lt_u (local.get $i) (i32.const 65536))))
        (i32.store (i32.const 196608) (i32.const 0))
        (i32.store (i32.const 196612) (i32.const 8192)))
      ;; write one element (async: pending until read), return the reader
      (func (export "stream") (result i32)
        (local $ends i64)
        (call $fill)
        (local.set $ends (call $stream.new))
        (drop (call $stream.write
          (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32)))
          (i32.const 196608) (i32.const 1)))
        (i32.wrap_i64 (local.get $ends)))
      (func (export "future") (result i32)
        (local $ends i64)
        (call $fill)
        (local.set $ends (call $future.new))
        (drop (call $future.write
          (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32)))
          (i32.const 196608)))
        (i32.wrap_i64 (local.get $ends)))
      ;; 196608 plain bytes, written at once (pending until read)
      (func (export "bytes") (result i32)
        (local $ends i64)
        (call $fill)
        (local.set $ends (call $bytes.new))
        (drop (call $bytes.write
          (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32)))
          (i32.const 0) (i32.const 196608)))
        (i32.wrap_i64 (local.get $ends)))
      (func (export "value") (result i32)
        (call $fill)
        (i32.const 196608))
    )
    (core instance $p (instantiate $P (with "" (instance
      (export "mem" (memory $memory))
      (export "stream.new" (func $stream.new))
      (export "stream.write" (func $stream.write))
      (export "future.new" (func $future.new))
      (export "future.write" (func $future.write))
      (export "bytes.new" (func $bytes.new))
      (export "bytes.write" (func $bytes.write))
    ))))
    (func (export "stream") (result $S)
      (canon lift (core func $p "stream")))
    (func (export "future") (result $F)
      (canon lift (core func $p "future")))
    (func (export "bytes") (result $B)
      (canon lift (core func $p "bytes")))
    (func (export "value") (result $V)
      (canon lift (core func $p "value") (memory $memory)))
  )
  (instance $producer (instantiate $Producer))

  (type $S (stream (list (list (list u8)))))
  (type $F (future (list (list (list u8)))))
  (type $B (stream u8))
  (core module $Mem
    (memory (export "mem") 4)
    (global $next (mut i32) (i32.const 1024))
    ;; a bump allocator: what it cannot give is out of bounds (a trap)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p (i32.and (i32.add (global.get $next)
                                      (i32.sub (local.get 2) (i32.const 1)))
                             (i32.sub (i32.const 0) (local.get 2))))
      (global.set $next (i32.add (local.get $p) (local.get 3)))
      (local.get $p)))
  (core instance $mem (instantiate $Mem))
  (alias core export $mem "mem" (core memory $memory))
  (alias core export $mem "realloc" (core func $realloc))
  (core func $produce-stream (canon lower (func $producer "stream")))
  (core func $produce-future (canon lower (func $producer "future")))
  (core func $produce-bytes (canon lower (func $producer "bytes")))
  (core func $bytes.read (canon stream.read $B async (memory $memory)))
  (core func $stream.read (canon stream.read $S async (memory $memory)
    (realloc $realloc)))
  (core func $future.read (canon future.read $F async (memory $memory)
    (realloc $realloc)))
  (core module $C
    (import "" "produce-stream" (func $produce-stream (result i32)))
    (import "" "produce-future" (func $produce-future (result i32)))
    (import "" "stream.read" (func $stream.read (param i32 i32 i32) (result i32)))
    (import "" "future.read" (func $future.read (param i32 i32) (result i32)))
    (import "" "produce-bytes" (func $produce-bytes (result i32)))
    (import "" "bytes.read" (func $bytes.read (param i32 i32 i32) (result i32)))
    (global $pings (mut i32) (i32.const 0))
    (func (export "bomb-stream") (result i32)
      (call $stream.read (call $produce-stream) (i32.const 0) (i32.const 1)))
    (func (export "bomb-future") (result i32)
      (call $future.read (call $produce-future) (i32.const 0)))
    ;; the read's event payload: COMPLETED (0) | bytes copied << 4
    (func (export "bytes-stream") (result i32)
      (call $bytes.read (call $produce-bytes) (i32.const 0) (i32.const 196608)))
    (func (export "ping") (result i32)
      (global.set $pings (i32.add (global.get $pings) (i32.const 1)))
      (global.get $pings))
  )
  (core instance $c (instantiate $C (with "" (instance
    (export "produce-stream" (func $produce-stream))
    (export "produce-future" (func $produce-future))
    (export "stream.read" (func $stream.read))
    (export "future.read" (func $future.read))
    (export "produce-bytes" (func $produce-bytes))
    (export "bytes.read" (func $bytes.read))
  ))))
  (func (export "bomb-stream") (result u32)
    (canon lift (core func $c "bomb-stream")))
  (func (export "bomb-future") (result u32)
    (canon lift (core func $c "bomb-future")))
  (export "bomb-result" (func $producer "value"))
  (func (export "bytes-stream") (result u32)
    (canon lift (core func $c "bytes-stream")))
  (func (export "ping") (result u32) (canon lift (core func $c "ping")))
)
