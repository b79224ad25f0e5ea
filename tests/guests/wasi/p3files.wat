;; p3files.wat - wasi:filesystem@0.3.0 for real (issue 21 point 4;
;; tests/wasi-p3-files.sh): the first preopen of get-directories, files
;; opened with open-at, written through write-via-stream and read back
;; through read-via-stream, stat-at, create-directory-at, an escape
;; refused, read-directory (not yet: its future answers unsupported).
;; The exports are async (stackful), so they may lower the async
;; functions synchronously (a sync task may not: D4); the host answers
;; them at once.
;;
;;   write-file: async func(name: string, text: string) -> u32
;;   read-file: async func(name: string) -> result<string, u32>
;;   stat: async func(name: string) -> result<tuple<u32, u64>, u32>
;;       the descriptor-type case and the size
;;   mkdir: async func(name: string) -> u32
;;   escape: async func() -> u32      open-at("../outside")
;;   list-dir: func() -> u32          read-directory's result
;;   dirs: func() -> u32              how many preopens
;;
;; u32 results: 0 ok, 1 + the error-code case (0.3's order: 20 no-entry,
;; 27 unsupported, 31 not-permitted), 100 + n where the guest's n-th
;; check failed.
;;
;; Regenerate p3files.wasm: tests/guests/build.sh wat (jco parse; jco
;; wit validates).
(component $C
  (import "wasi:filesystem/types@0.3.0" (instance $types
    (export "descriptor" (type $desc (sub resource)))
    (type $ec' (variant
      (case "access") (case "already") (case "bad-descriptor") (case "busy")
      (case "deadlock") (case "quota") (case "exist") (case "file-too-large")
      (case "illegal-byte-sequence") (case "in-progress") (case "interrupted")
      (case "invalid") (case "io") (case "is-directory") (case "loop")
      (case "too-many-links") (case "message-size") (case "name-too-long")
      (case "no-device") (case "no-entry") (case "no-lock")
      (case "insufficient-memory") (case "insufficient-space")
      (case "not-directory") (case "not-empty") (case "not-recoverable")
      (case "unsupported") (case "no-tty") (case "no-such-device")
      (case "overflow") (case "not-permitted") (case "pipe") (case "read-only")
      (case "invalid-seek") (case "text-file-busy") (case "cross-device")
      (case "other" (option string))))
    (export "error-code" (type $ec (eq $ec')))
    (type $dt' (variant
      (case "block-device") (case "character-device") (case "directory")
      (case "fifo") (case "symbolic-link") (case "regular-file")
      (case "socket") (case "other" (option string))))
    (export "descriptor-type" (type $dt (eq $dt')))
    (type $df' (flags "read" "write" "file-integrity-sync"
      "data-integrity-sync" "requested-write-sync" "mutate-directory"))
    (export "descriptor-flags" (type $df (eq $df')))
    (type $pf' (flags "symlink-follow"))
    (export "path-flags" (type $pf (eq $pf')))
    (type $of' (flags "create" "directory" "exclusive" "truncate"))
    (export "open-flags" (type $of (eq $of')))
    (type $instant' (record (field "seconds" s64) (field "nanoseconds" u32)))
    (export "instant" (type $instant (eq $instant')))
    (type $oi (option $instant))
    (type $stat' (record (field "type" $dt) (field "link-count" u64)
      (field "size" u64) (field "data-access-timestamp" $oi)
      (field "data-modification-timestamp" $oi)
      (field "status-change-timestamp" $oi)))
    (export "descriptor-stat" (type $stat (eq $stat')))
    (type $dirent' (record (field "type" $dt) (field "name" string)))
    (export "directory-entry" (type $dirent (eq $dirent')))
    (type $bytes (stream u8))
    (type $r-unit (result (error $ec)))
    (type $fut (future $r-unit))
    (type $rs (tuple $bytes $fut))
    (type $dstream (stream $dirent))
    (type $rd (tuple $dstream $fut))
    (type $r-desc (result (own $desc) (error $ec)))
    (type $r-stat (result $stat (error $ec)))
    (export "[method]descriptor.open-at" (func async
      (param "self" (borrow $desc)) (param "path-flags" $pf)
      (param "path" string) (param "open-flags" $of) (param "flags" $df)
      (result $r-desc)))
    (export "[method]descriptor.read-via-stream" (func
      (param "self" (borrow $desc)) (param "offset" u64) (result $rs)))
    (export "[method]descriptor.write-via-stream" (func
      (param "self" (borrow $desc)) (param "data" $bytes) (param "offset" u64)
      (result $fut)))
    (export "[method]descriptor.stat-at" (func async
      (param "self" (borrow $desc)) (param "path-flags" $pf)
      (param "path" string) (result $r-stat)))
    (export "[method]descriptor.create-directory-at" (func async
      (param "self" (borrow $desc)) (param "path" string) (result $r-unit)))
    (export "[method]descriptor.read-directory" (func
      (param "self" (borrow $desc)) (result $rd)))))
  (alias export $types "descriptor" (type $descriptor))
  (alias export $types "error-code" (type $error-code))
  (alias export $types "directory-entry" (type $dirent))
  (import "wasi:filesystem/preopens@0.3.0" (instance $preopens
    (alias outer $C $descriptor (type $d'))
    (export "descriptor" (type $d (eq $d')))
    (type $entry (tuple (own $d) string))
    (type $entries (list $entry))
    (export "get-directories" (func (result $entries)))))
  (type $result (result (error $error-code)))
  (type $future (future $result))
  (type $bytes (stream u8))
  (type $dstream (stream $dirent))
  (type $read-result (result string (error u32)))
  (type $stat-result (result (tuple u32 u64) (error u32)))

  (core module $Libc
    ;; 40 pages: a bump heap below 1 MiB, read-file's buffer above
    (memory (export "mem") 40)
    (global $next (mut i32) (i32.const 4096))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p (i32.and (i32.add (global.get $next)
                                      (i32.sub (local.get 2) (i32.const 1)))
                             (i32.sub (i32.const 0) (local.get 2))))
      (global.set $next (i32.add (local.get $p) (local.get 3)))
      (if (i32.gt_u (global.get $next) (i32.const 0x10_0000))
        (then unreachable))
      (local.get $p)))
  (core instance $libc (instantiate $Libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))

  (canon lower (func $preopens "get-directories") (memory $mem)
    (realloc $realloc) (core func $get-directories))
  (canon lower (func $types "[method]descriptor.open-at") (memory $mem)
    (realloc $realloc) (core func $open-at))
  (canon lower (func $types "[method]descriptor.read-via-stream")
    (memory $mem) (core func $read-via-stream))
  (canon lower (func $types "[method]descriptor.write-via-stream")
    (core func $write-via-stream))
  (canon lower (func $types "[method]descriptor.stat-at") (memory $mem)
    (realloc $realloc) (core func $stat-at))
  (canon lower (func $types "[method]descriptor.create-directory-at")
    (memory $mem) (realloc $realloc) (core func $create-directory-at))
  (canon lower (func $types "[method]descriptor.read-directory")
    (memory $mem) (realloc $realloc) (core func $read-directory))
  (core func $descriptor.drop (canon resource.drop $descriptor))
  (core func $stream.new (canon stream.new $bytes))
  (core func $stream.write (canon stream.write $bytes async (memory $mem)))
  (core func $stream.read (canon stream.read $bytes async (memory $mem)))
  (core func $stream.drop-writable (canon stream.drop-writable $bytes))
  (core func $stream.drop-readable (canon stream.drop-readable $bytes))
  (core func $dstream.drop-readable (canon stream.drop-readable $dstream))
  (core func $future.read
    (canon future.read $future async (memory $mem) (realloc $realloc)))
  (core func $future.drop-readable (canon future.drop-readable $future))
  (core func $task.return-u32 (canon task.return (result u32)))
  (core func $task.return-read (canon task.return (result $read-result)
    (memory $mem)))
  (core func $task.return-stat (canon task.return (result $stat-result)))

  (core module $M
    (import "" "mem" (memory 40))
    (import "" "get-directories" (func $get-directories (param i32)))
    (import "" "open-at" (func $open-at (param i32 i32 i32 i32 i32 i32 i32)))
    (import "" "read-via-stream" (func $read-via-stream (param i32 i64 i32)))
    (import "" "write-via-stream" (func $write-via-stream (param i32 i32 i64) (result i32)))
    (import "" "stat-at" (func $stat-at (param i32 i32 i32 i32 i32)))
    (import "" "create-directory-at" (func $create-directory-at (param i32 i32 i32 i32)))
    (import "" "read-directory" (func $read-directory (param i32 i32)))
    (import "" "descriptor.drop" (func $descriptor.drop (param i32)))
    (import "" "stream.new" (func $stream.new (result i64)))
    (import "" "stream.write" (func $stream.write (param i32 i32 i32) (result i32)))
    (import "" "stream.read" (func $stream.read (param i32 i32 i32) (result i32)))
    (import "" "stream.drop-writable" (func $stream.drop-writable (param i32)))
    (import "" "stream.drop-readable" (func $stream.drop-readable (param i32)))
    (import "" "dstream.drop-readable" (func $dstream.drop-readable (param i32)))
    (import "" "future.read" (func $future.read (param i32 i32) (result i32)))
    (import "" "future.drop-readable" (func $future.drop-readable (param i32)))
    (import "" "task.return-u32" (func $task.return-u32 (param i32)))
    (import "" "task.return-read" (func $task.return-read (param i32 i32 i32)))
    (import "" "task.return-stat" (func $task.return-stat (param i32 i32 i64)))
    ;; 16: a future's result<_, error-code> (the case at 20); 64: a
    ;; tuple<stream, future>; 96: get-directories' list; 128: open-at's
    ;; result (the handle or the case at 132); 160: stat-at's (the
    ;; type's case at 168, the size at 192); 256: create-directory-at's
    ;; (the case at 260); 288: the export's result area; 320: text
    (data (i32.const 320) "../outside")
    (global $root (mut i32) (i32.const 0))
    (global $ndirs (mut i32) (i32.const 0))

    ;; the first preopen's descriptor (get-directories once)
    (func $root (result i32)
      (if (i32.eqz (global.get $ndirs))
        (then
          (call $get-directories (i32.const 96))
          (global.set $ndirs (i32.load (i32.const 100)))
          (if (global.get $ndirs)
            (then (global.set $root (i32.load (i32.load (i32.const 96))))))))
      (global.get $root))

    ;; open-at(root, no follow, name, open-flags, flags): the handle, or
    ;; -(1 + the case)
    (func $open (param $p i32) (param $n i32) (param $of i32) (param $df i32)
                (result i32)
      (call $open-at (call $root) (i32.const 0) (local.get $p) (local.get $n)
                     (local.get $of) (local.get $df) (i32.const 128))
      (if (i32.load8_u (i32.const 128))
        (then (return (i32.sub (i32.const -1) (i32.load8_u (i32.const 132))))))
      (i32.load (i32.const 132)))

    ;; a future's result: 0 ok, 1 + the case
    (func $result-of (param $f i32) (result i32)
      (if (i32.ne (call $future.read (local.get $f) (i32.const 16)) (i32.const 0))
        (then (return (i32.const 102))))
      (call $future.drop-readable (local.get $f))
      (if (i32.eqz (i32.load8_u (i32.const 16)))
        (then (return (i32.const 0))))
      (i32.add (i32.const 1) (i32.load8_u (i32.const 20))))

    (func (export "write-file") (param i32 i32 i32 i32)
      (call $task.return-u32 (call $write-file (local.get 0) (local.get 1)
                                               (local.get 2) (local.get 3))))
    (func $write-file (param $np i32) (param $nn i32) (param $tp i32) (param $tn i32)
                      (result i32)
      (local $d i32) (local $s i64) (local $w i32) (local $f i32) (local $rc i32)
      ;; create | truncate, read | write
      (local.set $d (call $open (local.get $np) (local.get $nn) (i32.const 9) (i32.const 3)))
      (if (i32.lt_s (local.get $d) (i32.const 0))
        (then (return (i32.sub (i32.const 0) (local.get $d)))))
      (local.set $s (call $stream.new))
      (local.set $w (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))
      (local.set $f (call $write-via-stream (local.get $d)
                      (i32.wrap_i64 (local.get $s)) (i64.const 0)))
      ;; the host writes the bytes as they come: COMPLETED, all of them
      (if (i32.ne (call $stream.write (local.get $w) (local.get $tp) (local.get $tn))
                  (i32.shl (local.get $tn) (i32.const 4)))
        (then (return (i32.const 101))))
      (call $stream.drop-writable (local.get $w))
      (local.set $rc (call $result-of (local.get $f)))
      (call $descriptor.drop (local.get $d))
      (local.get $rc))

    (func (export "read-file") (param i32 i32)
      (local $at i32)
      (local.set $at (call $read-file (local.get 0) (local.get 1)))
      (call $task.return-read (i32.load8_u (local.get $at))
        (i32.load offset=4 (local.get $at)) (i32.load offset=8 (local.get $at))))
    (func $read-file (param $np i32) (param $nn i32) (result i32)
      (local $d i32) (local $r i32) (local $rc i32) (local $total i32)
      (local.set $d (call $open (local.get $np) (local.get $nn) (i32.const 0) (i32.const 1)))
      (if (i32.lt_s (local.get $d) (i32.const 0))
        (then
          (i32.store8 (i32.const 288) (i32.const 1))
          (i32.store (i32.const 292) (i32.sub (i32.const 0) (local.get $d)))
          (return (i32.const 288))))
      (call $read-via-stream (local.get $d) (i64.const 0) (i32.const 64))
      (local.set $r (i32.load (i32.const 64)))
      (block $eof
        (loop $more
          (local.set $rc (call $stream.read (local.get $r)
                           (i32.add (i32.const 0x10_0000) (local.get $total))
                           (i32.const 4096)))
          (local.set $total (i32.add (local.get $total)
                                     (i32.shr_u (local.get $rc) (i32.const 4))))
          (br_if $eof (i32.eq (i32.and (local.get $rc) (i32.const 0xf))
                              (i32.const 1 (; DROPPED ;))))
          (br_if $more (i32.lt_u (local.get $total) (i32.const 0x10_0000)))))
      (call $stream.drop-readable (local.get $r))
      (local.set $rc (call $result-of (i32.load (i32.const 68))))
      (call $descriptor.drop (local.get $d))
      (if (local.get $rc)
        (then
          (i32.store8 (i32.const 288) (i32.const 1))
          (i32.store (i32.const 292) (local.get $rc))
          (return (i32.const 288))))
      (i32.store8 (i32.const 288) (i32.const 0))
      (i32.store (i32.const 292) (i32.const 0x10_0000))
      (i32.store (i32.const 296) (local.get $total))
      (i32.const 288))

    (func (export "stat") (param i32 i32)
      (local $at i32)
      (local.set $at (call $stat (local.get 0) (local.get 1)))
      (call $task.return-stat (i32.load8_u (local.get $at))
        (i32.load offset=8 (local.get $at)) (i64.load offset=16 (local.get $at))))
    (func $stat (param $np i32) (param $nn i32) (result i32)
      (call $stat-at (call $root) (i32.const 0) (local.get $np) (local.get $nn)
                     (i32.const 160))
      (if (i32.load8_u (i32.const 160))
        (then
          (i32.store8 (i32.const 288) (i32.const 1))
          (i32.store (i32.const 296)
                     (i32.add (i32.const 1) (i32.load8_u (i32.const 168))))
          (return (i32.const 288))))
      (i32.store8 (i32.const 288) (i32.const 0))
      (i32.store (i32.const 296) (i32.load8_u (i32.const 168)))
      (i64.store (i32.const 304) (i64.load (i32.const 192)))
      (i32.const 288))

    (func (export "mkdir") (param i32 i32)
      (call $task.return-u32 (call $mkdir (local.get 0) (local.get 1))))
    (func $mkdir (param $np i32) (param $nn i32) (result i32)
      (call $create-directory-at (call $root) (local.get $np) (local.get $nn)
                                 (i32.const 256))
      (if (i32.eqz (i32.load8_u (i32.const 256)))
        (then (return (i32.const 0))))
      (i32.add (i32.const 1) (i32.load8_u (i32.const 260))))

    (func (export "escape")
      (call $task.return-u32 (call $escape)))
    (func $escape (result i32)
      (local $d i32)
      (local.set $d (call $open (i32.const 320) (i32.const 10) (i32.const 0) (i32.const 1)))
      (if (i32.ge_s (local.get $d) (i32.const 0))
        (then (call $descriptor.drop (local.get $d)) (return (i32.const 0))))
      (i32.sub (i32.const 0) (local.get $d)))

    (func (export "list-dir") (result i32)
      (call $read-directory (call $root) (i32.const 64))
      (call $dstream.drop-readable (i32.load (i32.const 64)))
      (call $result-of (i32.load (i32.const 68))))

    (func (export "dirs") (result i32)
      (drop (call $root))
      (global.get $ndirs)))

  (core instance $m (instantiate $M
    (with "" (instance
      (export "mem" (memory $mem))
      (export "get-directories" (func $get-directories))
      (export "open-at" (func $open-at))
      (export "read-via-stream" (func $read-via-stream))
      (export "write-via-stream" (func $write-via-stream))
      (export "stat-at" (func $stat-at))
      (export "create-directory-at" (func $create-directory-at))
      (export "read-directory" (func $read-directory))
      (export "descriptor.drop" (func $descriptor.drop))
      (export "stream.new" (func $stream.new))
      (export "stream.write" (func $stream.write))
      (export "stream.read" (func $stream.read))
      (export "stream.drop-writable" (func $stream.drop-writable))
      (export "stream.drop-readable" (func $stream.drop-readable))
      (export "dstream.drop-readable" (func $dstream.drop-readable))
      (export "future.read" (func $future.read))
      (export "future.drop-readable" (func $future.drop-readable))
      (export "task.return-u32" (func $task.return-u32))
      (export "task.return-read" (func $task.return-read))
      (export "task.return-stat" (func $task.return-stat))))))

  (func (export "write-file") async (param "name" string) (param "text" string)
    (result u32)
    (canon lift (core func $m "write-file") async (memory $mem) (realloc $realloc)))
  (func (export "read-file") async (param "name" string) (result $read-result)
    (canon lift (core func $m "read-file") async (memory $mem) (realloc $realloc)))
  (func (export "stat") async (param "name" string) (result $stat-result)
    (canon lift (core func $m "stat") async (memory $mem) (realloc $realloc)))
  (func (export "mkdir") async (param "name" string) (result u32)
    (canon lift (core func $m "mkdir") async (memory $mem) (realloc $realloc)))
  (func (export "escape") async (result u32)
    (canon lift (core func $m "escape") async))
  (func (export "list-dir") (result u32)
    (canon lift (core func $m "list-dir")))
  (func (export "dirs") (result u32)
    (canon lift (core func $m "dirs"))))
