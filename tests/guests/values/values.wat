;; values.wat - a guest for values of every size, for the daemon's bounds
;; on arguments and results (tests/daemon-values.sh, issue 18 point 2):
;; the varlink message bound and the history's bounded form.
;;
;;   export echo: func(s: string) -> string   returns its argument
;;   export make: func(n: u32) -> string      n bytes of the alphabet,
;;       "abcdefghijklmnopqrstuvwxyz" over and over
;;   export bytes: func(b: list<u8>) -> list<u8>   returns its argument
;;       (the core echo lifted with list<u8>: the same ABI as a string)
;;   export calls: func() -> u32              how many echo, bytes and make calls
;;       have run in this store (a call refused before the guest runs
;;       does not count)
;;
;; Memory: a bump allocator (realloc) that grows memory as it needs; each
;; call's post-return empties it again, so a store holds only its largest
;; value, not the sum of all.  make fills its string with memory.copy,
;; doubling the copied alphabet, so 20 MiB cost a few bulk copies.
;;
;; Regenerate values.wasm: tests/guests/build.sh wat.
(component
  (core module $Values
    (memory (export "mem") 1)
    ;; [0, 8): the return area of a string result (pointer, length)
    (global $base i32 (i32.const 16))
    (global $heap (mut i32) (i32.const 16))
    (global $calls (mut i32) (i32.const 0))

    ;; Make [0, end) addressable, growing memory; trap when it cannot.
    (func $reserve (param $end i32)
      (local $have i32)
      (local.set $have (i32.shl (memory.size) (i32.const 16)))
      (if (i32.gt_u (local.get $end) (local.get $have))
        (then
          (if (i32.eq
                (memory.grow
                  (i32.shr_u
                    (i32.add (i32.sub (local.get $end) (local.get $have))
                             (i32.const 65535))
                    (i32.const 16)))
                (i32.const -1))
            (then unreachable)))))

    (func $realloc (export "realloc")
      (param $old i32) (param $old-size i32) (param $align i32)
      (param $size i32) (result i32)
      (local $p i32) (local $end i32)
      (local.set $p
        (i32.and
          (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
          (i32.sub (i32.const 0) (local.get $align))))
      (local.set $end (i32.add (local.get $p) (local.get $size)))
      (if (i32.lt_u (local.get $end) (local.get $p))
        (then unreachable))
      (call $reserve (local.get $end))
      (global.set $heap (local.get $end))
      (local.get $p))

    ;; post-return of echo and make: the value has been lifted
    (func (export "reset") (param i32)
      (global.set $heap (global.get $base)))

    (func (export "echo") (param $ptr i32) (param $len i32) (result i32)
      (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
      (i32.store (i32.const 0) (local.get $ptr))
      (i32.store (i32.const 4) (local.get $len))
      (i32.const 0))

    (func (export "make") (param $n i32) (result i32)
      (local $p i32) (local $i i32) (local $k i32)
      (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
      (local.set $p (call $realloc (i32.const 0) (i32.const 0) (i32.const 1)
                                   (local.get $n)))
      ;; the first 26 bytes (or n): a..z
      (block $done
        (loop $l
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (br_if $done (i32.ge_u (local.get $i) (i32.const 26)))
          (i32.store8 (i32.add (local.get $p) (local.get $i))
                      (i32.add (i32.const 97) (local.get $i)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l)))
      ;; then double what is written (a multiple of 26) until n
      (local.set $k (local.get $i))
      (block $full
        (loop $l
          (br_if $full (i32.ge_u (local.get $k) (local.get $n)))
          (memory.copy
            (i32.add (local.get $p) (local.get $k))
            (local.get $p)
            (select (local.get $k) (i32.sub (local.get $n) (local.get $k))
                    (i32.le_u (local.get $k)
                              (i32.sub (local.get $n) (local.get $k)))))
          (local.set $k (i32.shl (local.get $k) (i32.const 1)))
          (br $l)))
      (i32.store (i32.const 0) (local.get $p))
      (i32.store (i32.const 4) (local.get $n))
      (i32.const 0))

    (func (export "calls") (result i32)
      (global.get $calls))
  )
  (core instance $values (instantiate $Values))
  (alias core export $values "mem" (core memory $mem))

  (func (export "echo") (param "s" string) (result string)
    (canon lift (core func $values "echo") (memory $mem)
      (realloc (core func $values "realloc"))
      (post-return (core func $values "reset"))))
  (func (export "bytes") (param "b" (list u8)) (result (list u8))
    (canon lift (core func $values "echo") (memory $mem)
      (realloc (core func $values "realloc"))
      (post-return (core func $values "reset"))))
  (func (export "make") (param "n" u32) (result string)
    (canon lift (core func $values "make") (memory $mem)
      (realloc (core func $values "realloc"))
      (post-return (core func $values "reset"))))
  (func (export "calls") (result u32)
    (canon lift (core func $values "calls")))
)
