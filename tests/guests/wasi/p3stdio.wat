;; p3stdio.wat - WASI 0.3 stdio, exit and random (issue 21 point 4;
;; tests/wasi-p3-stdio.sh).  stdout imports write-via-stream in jco
;; 1.35's 0.3.0 shape (a function returning future<result<_,
;; error-code>>), stderr in the later drafts' shape (an async function
;; returning result<_, error-code>): the host serves both, told apart by
;; the type.
;;
;;   say: async func(text: string) -> u32        text to stdout
;;   yell: async func(text: string) -> u32       text to stderr
;;   say-early: async func(text: string) -> u32  the write is started
;;       before the stream is handed to write-via-stream
;;   cat: async func() -> u32     stdin (read-via-stream) copied to
;;       stdout; returns the bytes copied
;;   cancel-write: async func() -> u32   an async write-via-stream to
;;       stderr cancelled (subtask.cancel): 10 * the subtask's state
;;       (4: cancelled before returned) + the code of a stream.write
;;       afterwards (1: dropped)
;;   random: func(max-len: u64) -> u32   the length of get-random-bytes
;;   seed: func() -> u64    get-insecure-seed's first half, or'ed with
;;       get-random-u64 (0 only if both are 0: the denial's default)
;;   quit: func(fail: bool)    wasi:cli/exit@0.3.0 exit(err or ok)
;;   hold: func(text: string) -> u32   writes text to stdout through a
;;       stream it keeps open (its writable end and the future in
;;       globals); release: func() -> u32 drops it and reads the result
;;       (the store holds a host end between the two); more: func(text:
;;       string) -> u32 writes more through the held stream
;;   keep-future: func()   a future<u32> of the guest's own, both ends
;;       kept in globals; use-future: func() -> u32 writes 7 into it
;;       (BLOCKED: nobody reads yet) and reads it back (the store holds
;;       a future's ends between the two)
;;   wait-first: async func() -> u32   waits for stdout's result before
;;       its stream is over: nothing can ever move (the deadlock trap)
;;   loop-back: func()   hands stdin's stream (the host writes it) to
;;       stdout's write-via-stream: both ends would be the host's, a trap
;;   wasi:cli/run@0.3.0 run: async func() -> result   says hello
;;
;; say, yell, say-early and cat return 0 for ok, 1 + the error-code case
;; for an error, 100 + n where the n-th check of the guest failed.
;;
;; Regenerate p3stdio.wasm: tests/guests/build.sh wat (jco parse; jco
;; wit validates).
(component
  (import "wasi:cli/stdout@0.3.0" (instance $stdout
    (type $ec (enum "io" "illegal-byte-sequence" "pipe"))
    (export "error-code" (type $ec' (eq $ec)))
    (type $r (result (error $ec')))
    (type $f (future $r))
    (type $s (stream u8))
    (export "write-via-stream" (func (param "data" $s) (result $f)))))
  (import "wasi:cli/stderr@0.3.0" (instance $stderr
    (type $ec (enum "io" "illegal-byte-sequence" "pipe"))
    (export "error-code" (type $ec' (eq $ec)))
    (type $r (result (error $ec')))
    (type $s (stream u8))
    (export "write-via-stream" (func async (param "data" $s) (result $r)))))
  (import "wasi:cli/stdin@0.3.0" (instance $stdin
    (type $ec (enum "io" "illegal-byte-sequence" "pipe"))
    (export "error-code" (type $ec' (eq $ec)))
    (type $r (result (error $ec')))
    (type $f (future $r))
    (type $s (stream u8))
    (type $t (tuple $s $f))
    (export "read-via-stream" (func (result $t)))))
  (import "wasi:cli/exit@0.3.0" (instance $exit
    (type $status (result))
    (export "exit" (func (param "status" $status)))))
  (import "wasi:random/random@0.3.0" (instance $random
    (type $bytes (list u8))
    (export "get-random-bytes" (func (param "max-len" u64) (result $bytes)))
    (export "get-random-u64" (func (result u64)))))
  (import "wasi:random/insecure-seed@0.3.0" (instance $seed
    (type $pair (tuple u64 u64))
    (export "get-insecure-seed" (func (result $pair)))))
  (alias export $stdout "error-code" (type $error-code))
  (type $result (result (error $error-code)))
  (type $future (future $result))
  (type $bytes (stream u8))
  (type $run-result (result))
  (type $fu32 (future u32))

  (core module $Libc
    ;; 40 pages: room for get-random-bytes' 1 MiB
    (memory (export "mem") 40)
    (global $next (mut i32) (i32.const 4096))
    ;; a bump allocator: a test guest, not a long-lived service
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p (i32.and (i32.add (global.get $next)
                                      (i32.sub (local.get 2) (i32.const 1)))
                             (i32.sub (i32.const 0) (local.get 2))))
      (global.set $next (i32.add (local.get $p) (local.get 3)))
      (if (i32.gt_u (global.get $next) (i32.const 0x28_0000))
        (then unreachable))
      (local.get $p)))
  (core instance $libc (instantiate $Libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))

  (canon lower (func $stdout "write-via-stream") (core func $stdout-write))
  (canon lower (func $stderr "write-via-stream") async (memory $mem)
    (core func $stderr-write))
  (canon lower (func $stdin "read-via-stream") (memory $mem)
    (core func $stdin-read))
  (canon lower (func $exit "exit") (core func $exit))
  (canon lower (func $random "get-random-bytes") (memory $mem)
    (realloc $realloc) (core func $random-bytes))
  (canon lower (func $random "get-random-u64") (core func $random-u64))
  (canon lower (func $seed "get-insecure-seed") (memory $mem)
    (core func $insecure-seed))
  (core func $stream.new (canon stream.new $bytes))
  (core func $stream.write (canon stream.write $bytes async (memory $mem)))
  (core func $stream.read (canon stream.read $bytes async (memory $mem)))
  (core func $stream.drop-writable (canon stream.drop-writable $bytes))
  (core func $stream.drop-readable (canon stream.drop-readable $bytes))
  (core func $future.read (canon future.read $future async (memory $mem)))
  (core func $future.drop-readable (canon future.drop-readable $future))
  (core func $fu32.new (canon future.new $fu32))
  (core func $fu32.write (canon future.write $fu32 async (memory $mem)))
  (core func $fu32.read (canon future.read $fu32 async (memory $mem)))
  (core func $waitable-set.new (canon waitable-set.new))
  (core func $waitable.join (canon waitable.join))
  (core func $waitable-set.wait (canon waitable-set.wait (memory $mem)))
  (core func $subtask.cancel (canon subtask.cancel))
  (core func $subtask.drop (canon subtask.drop))
  (core func $task.return-u32 (canon task.return (result u32)))
  (core func $task.return-run (canon task.return (result $run-result)))

  (core module $M
    (import "" "mem" (memory 40))
    (import "" "stdout-write" (func $stdout-write (param i32) (result i32)))
    (import "" "stderr-write" (func $stderr-write (param i32 i32) (result i32)))
    (import "" "stdin-read" (func $stdin-read (param i32)))
    (import "" "exit" (func $exit (param i32)))
    (import "" "random-bytes" (func $random-bytes (param i64 i32)))
    (import "" "random-u64" (func $random-u64 (result i64)))
    (import "" "insecure-seed" (func $insecure-seed (param i32)))
    (import "" "stream.new" (func $stream.new (result i64)))
    (import "" "stream.write" (func $stream.write (param i32 i32 i32) (result i32)))
    (import "" "stream.read" (func $stream.read (param i32 i32 i32) (result i32)))
    (import "" "stream.drop-writable" (func $stream.drop-writable (param i32)))
    (import "" "stream.drop-readable" (func $stream.drop-readable (param i32)))
    (import "" "future.read" (func $future.read (param i32 i32) (result i32)))
    (import "" "future.drop-readable" (func $future.drop-readable (param i32)))
    (import "" "fu32.new" (func $fu32.new (result i64)))
    (import "" "fu32.write" (func $fu32.write (param i32 i32) (result i32)))
    (import "" "fu32.read" (func $fu32.read (param i32 i32) (result i32)))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable.join" (func $waitable.join (param i32 i32)))
    (import "" "waitable-set.wait" (func $waitable-set.wait (param i32 i32) (result i32)))
    (import "" "subtask.cancel" (func $subtask.cancel (param i32) (result i32)))
    (import "" "subtask.drop" (func $subtask.drop (param i32)))
    (import "" "task.return-u32" (func $task.return-u32 (param i32)))
    (import "" "task.return-run" (func $task.return-run (param i32)))
    ;; 16: a future's result<_, error-code>; 32: an event record;
    ;; 48: stderr's result; 64: stdin's tuple; 96: a seed; 1024: a
    ;; 2 KiB buffer (cat)
    (data (i32.const 512) "hello from wasi:cli/run@0.3.0\n")

    ;; Wait for h's event (after a BLOCKED): its payload.
    (func $wait (param $h i32) (result i32)
      (local $ws i32)
      (local.set $ws (call $waitable-set.new))
      (call $waitable.join (local.get $h) (local.get $ws))
      (drop (call $waitable-set.wait (local.get $ws) (i32.const 32)))
      (call $waitable.join (local.get $h) (i32.const 0))
      (i32.load (i32.const 36)))

    ;; n bytes at p into writable end w, all of them: 0, or 100 + check
    (func $write-all (param $w i32) (param $p i32) (param $n i32) (result i32)
      (local $rc i32)
      (local.set $rc (call $stream.write (local.get $w) (local.get $p) (local.get $n)))
      (if (i32.eq (local.get $rc) (i32.const -1))
        (then (local.set $rc (call $wait (local.get $w)))))
      (if (i32.ne (local.get $rc) (i32.shl (local.get $n) (i32.const 4)))
        (then (return (i32.const 101))))
      (i32.const 0))

    ;; A future's result<_, error-code>: 0 ok, 1 + the case
    (func $result-of (param $f i32) (result i32)
      (local $rc i32)
      (local.set $rc (call $future.read (local.get $f) (i32.const 16)))
      (if (i32.eq (local.get $rc) (i32.const -1))
        (then (local.set $rc (call $wait (local.get $f)))))
      (call $future.drop-readable (local.get $f))
      (if (i32.ne (local.get $rc) (i32.const 0 (; COMPLETED ;)))
        (then (return (i32.const 102))))
      (if (i32.eqz (i32.load8_u (i32.const 16)))
        (then (return (i32.const 0))))
      (i32.add (i32.const 1) (i32.load8_u (i32.const 17))))

    ;; text to stdout; early: the write is started first
    (func $say (param $p i32) (param $n i32) (param $early i32) (result i32)
      (local $s i64) (local $r i32) (local $w i32) (local $f i32)
      (local $rc i32)
      (local.set $s (call $stream.new))
      (local.set $r (i32.wrap_i64 (local.get $s)))
      (local.set $w (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))
      (if (local.get $early)
        (then
          ;; no reader yet: BLOCKED
          (if (i32.ne (call $stream.write (local.get $w) (local.get $p) (local.get $n))
                      (i32.const -1))
            (then (return (i32.const 103))))
          (local.set $f (call $stdout-write (local.get $r)))
          ;; the host took the bytes when it took the stream
          (if (i32.ne (call $wait (local.get $w))
                      (i32.shl (local.get $n) (i32.const 4)))
            (then (return (i32.const 104)))))
        (else
          (local.set $f (call $stdout-write (local.get $r)))
          (local.set $rc (call $write-all (local.get $w) (local.get $p) (local.get $n)))
          (if (local.get $rc) (then (return (local.get $rc))))))
      (call $stream.drop-writable (local.get $w))
      (call $result-of (local.get $f)))

    ;; text to stderr (the async shape): the call's subtask returns
    (func $yell (param $p i32) (param $n i32) (result i32)
      (local $s i64) (local $r i32) (local $w i32) (local $st i32)
      (local $rc i32)
      (local.set $s (call $stream.new))
      (local.set $r (i32.wrap_i64 (local.get $s)))
      (local.set $w (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))
      (local.set $st (call $stderr-write (local.get $r) (i32.const 48)))
      (if (i32.ne (i32.and (local.get $st) (i32.const 0xf)) (i32.const 1 (; STARTED ;)))
        (then (return (i32.const 105))))
      (local.set $st (i32.shr_u (local.get $st) (i32.const 4)))
      (local.set $rc (call $write-all (local.get $w) (local.get $p) (local.get $n)))
      (if (local.get $rc) (then (return (local.get $rc))))
      (call $stream.drop-writable (local.get $w))
      (if (i32.ne (call $wait (local.get $st)) (i32.const 2 (; RETURNED ;)))
        (then (return (i32.const 106))))
      (call $subtask.drop (local.get $st))
      (if (i32.eqz (i32.load8_u (i32.const 48)))
        (then (return (i32.const 0))))
      (i32.add (i32.const 1) (i32.load8_u (i32.const 49))))

    (func (export "say") (param i32 i32)
      (call $task.return-u32 (call $say (local.get 0) (local.get 1) (i32.const 0))))
    (func (export "say-early") (param i32 i32)
      (call $task.return-u32 (call $say (local.get 0) (local.get 1) (i32.const 1))))
    (func (export "yell") (param i32 i32)
      (call $task.return-u32 (call $yell (local.get 0) (local.get 1))))

    (func (export "cat")
      (local $in i32) (local $inf i32) (local $s i64) (local $r i32)
      (local $w i32) (local $f i32) (local $rc i32) (local $n i32)
      (local $total i32) (local $res i32)
      (call $stdin-read (i32.const 64))
      (local.set $in (i32.load (i32.const 64)))
      (local.set $inf (i32.load (i32.const 68)))
      (local.set $s (call $stream.new))
      (local.set $r (i32.wrap_i64 (local.get $s)))
      (local.set $w (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))
      (local.set $f (call $stdout-write (local.get $r)))
      (block $eof
        (loop $more
          (local.set $rc (call $stream.read (local.get $in) (i32.const 1024) (i32.const 2048)))
          (if (i32.eq (local.get $rc) (i32.const -1))
            (then (local.set $rc (call $wait (local.get $in)))))
          (local.set $n (i32.shr_u (local.get $rc) (i32.const 4)))
          (if (local.get $n)
            (then
              (local.set $res (call $write-all (local.get $w) (i32.const 1024) (local.get $n)))
              (if (local.get $res)
                (then (call $task.return-u32 (local.get $res)) (return)))
              (local.set $total (i32.add (local.get $total) (local.get $n)))))
          (br_if $eof (i32.eq (i32.and (local.get $rc) (i32.const 0xf))
                              (i32.const 1 (; DROPPED ;))))
          (br $more)))
      (call $stream.drop-readable (local.get $in))
      (local.set $res (call $result-of (local.get $inf)))
      (if (local.get $res)
        (then (call $task.return-u32 (local.get $res)) (return)))
      (call $stream.drop-writable (local.get $w))
      (local.set $res (call $result-of (local.get $f)))
      (if (local.get $res)
        (then (call $task.return-u32 (local.get $res)) (return)))
      (call $task.return-u32 (local.get $total)))

    (func (export "cancel-write")
      (local $s i64) (local $r i32) (local $w i32) (local $st i32)
      (local $state i32)
      (local.set $s (call $stream.new))
      (local.set $r (i32.wrap_i64 (local.get $s)))
      (local.set $w (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))
      (local.set $st (i32.shr_u (call $stderr-write (local.get $r) (i32.const 48))
                                (i32.const 4)))
      (local.set $state (call $subtask.cancel (local.get $st)))
      (call $subtask.drop (local.get $st))
      (call $task.return-u32
        (i32.add (i32.mul (local.get $state) (i32.const 10))
                 (i32.and (call $stream.write (local.get $w) (i32.const 512) (i32.const 4))
                          (i32.const 0xf)))))

    (func (export "random") (param i64) (result i32)
      (call $random-bytes (local.get 0) (i32.const 80))
      (i32.load (i32.const 84)))
    (func (export "seed") (result i64)
      (call $insecure-seed (i32.const 96))
      (i64.or (i64.load (i32.const 96)) (call $random-u64)))
    (func (export "quit") (param i32)
      (call $exit (local.get 0)))

    (func (export "wait-first")
      (local $s i64)
      (local.set $s (call $stream.new))
      (call $task.return-u32
        (call $result-of (call $stdout-write (i32.wrap_i64 (local.get $s))))))

    (func (export "loop-back")
      (call $stdin-read (i32.const 64))
      (drop (call $stdout-write (i32.load (i32.const 64)))))

    (global $fut (mut i64) (i64.const 0))
    (func (export "keep-future")
      (global.set $fut (call $fu32.new)))
    (func (export "use-future") (result i32)
      (local $r i32) (local $w i32)
      (local.set $r (i32.wrap_i64 (global.get $fut)))
      (local.set $w (i32.wrap_i64 (i64.shr_u (global.get $fut) (i64.const 32))))
      (if (i32.eqz (local.get $w)) (then (return (i32.const 109))))
      (i32.store (i32.const 112) (i32.const 7))
      (if (i32.ne (call $fu32.write (local.get $w) (i32.const 112)) (i32.const -1))
        (then (return (i32.const 110))))
      (if (i32.ne (call $fu32.read (local.get $r) (i32.const 116)) (i32.const 0))
        (then (return (i32.const 111))))
      (i32.load (i32.const 116)))

    (global $held-w (mut i32) (i32.const 0))
    (global $held-f (mut i32) (i32.const 0))
    (func (export "hold") (param $p i32) (param $n i32) (result i32)
      (local $s i64)
      (if (global.get $held-w) (then (return (i32.const 107))))
      (local.set $s (call $stream.new))
      (global.set $held-w (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))
      (global.set $held-f (call $stdout-write (i32.wrap_i64 (local.get $s))))
      ;; the host takes the bytes at once: COMPLETED, all of them
      (if (i32.ne (call $stream.write (global.get $held-w) (local.get $p) (local.get $n))
                  (i32.shl (local.get $n) (i32.const 4)))
        (then (return (i32.const 101))))
      (i32.const 0))
    (func (export "more") (param $p i32) (param $n i32) (result i32)
      (if (i32.eqz (global.get $held-w)) (then (return (i32.const 108))))
      (if (i32.ne (call $stream.write (global.get $held-w) (local.get $p) (local.get $n))
                  (i32.shl (local.get $n) (i32.const 4)))
        (then (return (i32.const 101))))
      (i32.const 0))
    (func (export "release")
      (if (i32.eqz (global.get $held-w))
        (then (call $task.return-u32 (i32.const 108)) (return)))
      (call $stream.drop-writable (global.get $held-w))
      (global.set $held-w (i32.const 0))
      (call $task.return-u32 (call $result-of (global.get $held-f))))

    (func (export "run")
      (local $rc i32)
      (local.set $rc (call $say (i32.const 512) (i32.const 30) (i32.const 0)))
      (call $task.return-run (i32.ne (local.get $rc) (i32.const 0)))))

  (core instance $m (instantiate $M
    (with "" (instance
      (export "mem" (memory $mem))
      (export "stdout-write" (func $stdout-write))
      (export "stderr-write" (func $stderr-write))
      (export "stdin-read" (func $stdin-read))
      (export "exit" (func $exit))
      (export "random-bytes" (func $random-bytes))
      (export "random-u64" (func $random-u64))
      (export "insecure-seed" (func $insecure-seed))
      (export "stream.new" (func $stream.new))
      (export "stream.write" (func $stream.write))
      (export "stream.read" (func $stream.read))
      (export "stream.drop-writable" (func $stream.drop-writable))
      (export "stream.drop-readable" (func $stream.drop-readable))
      (export "future.read" (func $future.read))
      (export "future.drop-readable" (func $future.drop-readable))
      (export "fu32.new" (func $fu32.new))
      (export "fu32.write" (func $fu32.write))
      (export "fu32.read" (func $fu32.read))
      (export "waitable-set.new" (func $waitable-set.new))
      (export "waitable.join" (func $waitable.join))
      (export "waitable-set.wait" (func $waitable-set.wait))
      (export "subtask.cancel" (func $subtask.cancel))
      (export "subtask.drop" (func $subtask.drop))
      (export "task.return-u32" (func $task.return-u32))
      (export "task.return-run" (func $task.return-run))))))

  (func (export "say") async (param "text" string) (result u32)
    (canon lift (core func $m "say") async (memory $mem) (realloc $realloc)))
  (func (export "say-early") async (param "text" string) (result u32)
    (canon lift (core func $m "say-early") async (memory $mem) (realloc $realloc)))
  (func (export "yell") async (param "text" string) (result u32)
    (canon lift (core func $m "yell") async (memory $mem) (realloc $realloc)))
  (func (export "cat") async (result u32)
    (canon lift (core func $m "cat") async))
  (func (export "cancel-write") async (result u32)
    (canon lift (core func $m "cancel-write") async))
  (func (export "random") (param "max-len" u64) (result u32)
    (canon lift (core func $m "random")))
  (func (export "seed") (result u64)
    (canon lift (core func $m "seed")))
  (func (export "quit") (param "fail" bool)
    (canon lift (core func $m "quit")))
  (func (export "loop-back")
    (canon lift (core func $m "loop-back")))
  (func (export "wait-first") async (result u32)
    (canon lift (core func $m "wait-first") async))
  (func (export "hold") (param "text" string) (result u32)
    (canon lift (core func $m "hold") (memory $mem) (realloc $realloc)))
  (func (export "keep-future")
    (canon lift (core func $m "keep-future")))
  (func (export "use-future") (result u32)
    (canon lift (core func $m "use-future")))
  (func (export "more") (param "text" string) (result u32)
    (canon lift (core func $m "more") (memory $mem) (realloc $realloc)))
  (func (export "release") async (result u32)
    (canon lift (core func $m "release") async))
  (func $run async (result $run-result)
    (canon lift (core func $m "run") async))
  (instance $run-instance (export "run" (func $run)))
  (export "wasi:cli/run@0.3.0" (instance $run-instance)))
