;; p1files.wat - a wasi_snapshot_preview1 core module that holds files
;; open without end (tests/wasi-run.sh, issue 18): path_open of a 5000-
;; byte path must be nametoolong before the host copies it, then "." is
;; opened again and again, never closed, until path_open fails.  Exit
;; code: that failure's errno (mfile, 33, expected) when it came after
;; exactly 1024 opens (WASI_MAX_OPEN_FILES), else 100 (the long path was
;; not refused) or 101 (the count was wrong).  Needs a preopen (fd 3).
;;
;; Regenerate p1files.wasm: tests/guests/build.sh wat.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32)
                     (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) ".")

  ;; path_open(3, 0, ptr 0, len, oflags directory, rights fd_read |
  ;; fd_readdir, 0, 0, fd out at 16)
  (func $open (param $len i32) (result i32)
    (call $path_open (i32.const 3) (i32.const 0) (i32.const 0)
      (local.get $len) (i32.const 2) (i64.const 0x4002) (i64.const 0)
      (i32.const 0) (i32.const 16)))

  (func (export "_start")
    (local $n i32) (local $e i32)
    (if (i32.ne (call $open (i32.const 5000)) (i32.const 37))
      (then (call $proc_exit (i32.const 100))))
    (block $done
      (loop $more
        (local.set $e (call $open (i32.const 1)))
        (br_if $done (local.get $e))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $more)))
    (if (i32.ne (local.get $n) (i32.const 1024))
      (then (call $proc_exit (i32.const 101))))
    (call $proc_exit (local.get $e)))
)
