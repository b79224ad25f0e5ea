;; wasi.wat - WASI 0.2 host functions re-exported as they are, so a test
;; calls them straight from the host with arguments no real guest would
;; pass (tests/unit/wasi/test_wasi_limits.c, the issue 18 bounds): a poll over too
;; many pollables, too many random bytes, a write longer than
;; check-write allows, more open files than a store may hold.
;;
;;   export poll, subscribe-duration      wasi:io/poll, monotonic-clock
;;   export get-random-bytes, get-insecure-random-bytes
;;   export get-stdout, write             wasi:cli/stdout, output-stream
;;   export get-directories, open-at      wasi:filesystem preopens, types
;;
;; No core code: every export is the import itself.  Regenerate
;; wasi.wasm: tests/guests/build.sh wat.
(component
  (import "wasi:io/poll@0.2.12" (instance $poll
    (export "pollable" (type $p (sub resource)))
    (export "poll"
      (func (param "in" (list (borrow $p))) (result (list u32))))
  ))
  (alias export $poll "pollable" (type $pollable))
  (import "wasi:clocks/monotonic-clock@0.2.12" (instance $clock
    (alias outer 1 $pollable (type $p))
    (export "pollable" (type $pe (eq $p)))
    (export "subscribe-duration"
      (func (param "when" u64) (result (own $pe))))
  ))
  (import "wasi:random/random@0.2.12" (instance $random
    (export "get-random-bytes" (func (param "len" u64) (result (list u8))))
  ))
  (import "wasi:random/insecure@0.2.12" (instance $insecure
    (export "get-insecure-random-bytes"
      (func (param "len" u64) (result (list u8))))
  ))
  (import "wasi:io/error@0.2.12" (instance $error
    (export "error" (type (sub resource)))
  ))
  (alias export $error "error" (type $err))
  (import "wasi:io/streams@0.2.12" (instance $streams
    (alias outer 1 $err (type $e))
    (export "error" (type $ee (eq $e)))
    (export "output-stream" (type $o (sub resource)))
    (type $se (variant (case "last-operation-failed" (own $ee))
                       (case "closed")))
    (export "stream-error" (type $sev (eq $se)))
    (export "[method]output-stream.write"
      (func (param "self" (borrow $o)) (param "contents" (list u8))
            (result (result (error $sev)))))
  ))
  (alias export $streams "output-stream" (type $out))
  (import "wasi:cli/stdout@0.2.12" (instance $stdout
    (alias outer 1 $out (type $o))
    (export "output-stream" (type $oe (eq $o)))
    (export "get-stdout" (func (result (own $oe))))
  ))
  (import "wasi:filesystem/types@0.2.12" (instance $types
    (export "descriptor" (type $d (sub resource)))
    (type $pf (flags "symlink-follow"))
    (export "path-flags" (type $pfe (eq $pf)))
    (type $of (flags "create" "directory" "exclusive" "truncate"))
    (export "open-flags" (type $ofe (eq $of)))
    (type $df (flags "read" "write" "file-integrity-sync"
                     "data-integrity-sync" "requested-write-sync"
                     "mutate-directory"))
    (export "descriptor-flags" (type $dfe (eq $df)))
    (type $ec (enum "access" "would-block" "already" "bad-descriptor"
                    "busy" "deadlock" "quota" "exist" "file-too-large"
                    "illegal-byte-sequence" "in-progress" "interrupted"
                    "invalid" "io" "is-directory" "loop" "too-many-links"
                    "message-size" "name-too-long" "no-device" "no-entry"
                    "no-lock" "insufficient-memory" "insufficient-space"
                    "not-directory" "not-empty" "not-recoverable"
                    "unsupported" "no-tty" "no-such-device" "overflow"
                    "not-permitted" "pipe" "read-only" "invalid-seek"
                    "text-file-busy" "cross-device"))
    (export "error-code" (type $ece (eq $ec)))
    (export "[method]descriptor.open-at"
      (func (param "self" (borrow $d)) (param "path-flags" $pfe)
            (param "path" string) (param "open-flags" $ofe)
            (param "flags" $dfe)
            (result (result (own $d) (error $ece)))))
  ))
  (alias export $types "descriptor" (type $desc))
  (import "wasi:filesystem/preopens@0.2.12" (instance $preopens
    (alias outer 1 $desc (type $d))
    (export "descriptor" (type $de (eq $d)))
    (export "get-directories"
      (func (result (list (tuple (own $de) string)))))
  ))

  (alias export $poll "poll" (func $poll-f))
  (alias export $clock "subscribe-duration" (func $sub-f))
  (alias export $random "get-random-bytes" (func $rand-f))
  (alias export $insecure "get-insecure-random-bytes" (func $insec-f))
  (alias export $stdout "get-stdout" (func $stdout-f))
  (alias export $streams "[method]output-stream.write" (func $write-f))
  (alias export $preopens "get-directories" (func $dirs-f))
  (alias export $types "[method]descriptor.open-at" (func $open-f))
  (export "poll" (func $poll-f))
  (export "subscribe-duration" (func $sub-f))
  (export "get-random-bytes" (func $rand-f))
  (export "get-insecure-random-bytes" (func $insec-f))
  (export "get-stdout" (func $stdout-f))
  (export "write" (func $write-f))
  (export "get-directories" (func $dirs-f))
  (export "open-at" (func $open-f))
)
