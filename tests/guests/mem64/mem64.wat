;; mem64.wat - the 64-bit pointer Canonical ABI (memory64 in canonical
;; options): a core module whose memory is i64 behind canon lift, and a
;; canon lower into that memory of a function of an inner component with
;; a 32-bit memory, so values cross between the two pointer sizes
;; (tests/mem64.sh).
;;
;;   echo(s: string) -> string        lifted: (i64 ptr, i64 len) -> i64
;;   sum(xs: list<u32>) -> u64        a list read through a 64-bit pointer
;;   make(n: u32) -> list<u8>         n bytes 0, 1, ... made by realloc
;;   pair(a: u64, s: string) -> tuple<u64, string>  a record's 8-byte
;;                                    alignment and 16-byte string
;;   round(s: string) -> string       through the inner component's echo,
;;                                    lowered with 64-bit pointers and realloc
;;   high(s: string) -> string        the string moved to the end of the
;;                                    memory (grown to 2 pages)
;;   far(s: string) -> string         the memory grown past 4 GiB (65,537
;;                                    pages), then the inner echo lowered
;;                                    with its return area and realloc
;;                                    above 2^32, and lifted from there
;;   oob() -> string                  a string at 2^40: traps, out of bounds
;;   wrap() -> list<u32>              a list of 2^62 + 1 elements at 16,
;;                                    whose byte length wraps to 4 in 64
;;                                    bits: traps, never reads 4 bytes
;;
;; Regenerate mem64.wasm: tests/guests/build.sh wat.
(component
  (component $Inner
    (core module $I
      (memory (export "mem") 1)
      (global $bump (mut i32) (i32.const 1024))
      (func (export "realloc") (param i32 i32 i32 i32) (result i32)
        (local $p i32)
        (local.set $p (global.get $bump))
        (global.set $bump (i32.add (global.get $bump)
          (i32.and (i32.add (local.get 3) (i32.const 7)) (i32.const -8))))
        (local.get $p))
      (func (export "echo") (param $p i32) (param $n i32) (result i32)
        (i32.store (i32.const 8) (local.get $p))
        (i32.store (i32.const 12) (local.get $n))
        (i32.const 8))
      (func (export "reset") (param i32) (global.set $bump (i32.const 1024))))
    (core instance $i (instantiate $I))
    (alias core export $i "mem" (core memory $imem))
    (func (export "echo") (param "s" string) (result string)
      (canon lift (core func $i "echo") (memory $imem)
        (realloc (core func $i "realloc"))
        (post-return (core func $i "reset")))))
  (instance $inner (instantiate $Inner))

  (core module $Libc
    (memory (export "mem") i64 1)
    (global $bump (export "bump") (mut i64) (i64.const 1024))
    ;; a bump allocator: 8-byte aligned, never frees
    (func (export "realloc") (param i64 i64 i64 i64) (result i64)
      (local $p i64)
      (local.set $p (global.get $bump))
      (global.set $bump (i64.add (global.get $bump)
        (i64.and (i64.add (local.get 3) (i64.const 7)) (i64.const -8))))
      (local.get $p)))
  (core instance $libc (instantiate $Libc))
  (alias core export $libc "mem" (core memory $mem))
  (core func $inner-echo
    (canon lower (func $inner "echo") (memory $mem)
      (realloc (core func $libc "realloc"))))

  (core module $Main
    (import "libc" "mem" (memory i64 1))
    (import "libc" "realloc" (func $realloc (param i64 i64 i64 i64) (result i64)))
    (import "libc" "bump" (global $bump (mut i64)))
    (import "inner" "echo" (func $inner-echo (param i64 i64 i64)))
    ;; results go at 16: (ptr, len) pairs, 8 bytes each
    (func (export "echo") (param $p i64) (param $n i64) (result i64)
      (i64.store (i64.const 16) (local.get $p))
      (i64.store (i64.const 24) (local.get $n))
      (i64.const 16))
    (func (export "sum") (param $p i64) (param $n i64) (result i64)
      (local $acc i64)
      (block $done
        (loop $next
          (br_if $done (i64.eqz (local.get $n)))
          (local.set $acc (i64.add (local.get $acc)
            (i64.load32_u (local.get $p))))
          (local.set $p (i64.add (local.get $p) (i64.const 4)))
          (local.set $n (i64.sub (local.get $n) (i64.const 1)))
          (br $next)))
      (local.get $acc))
    (func (export "make") (param $n i32) (result i64)
      (local $p i64) (local $i i64)
      (local.set $p (call $realloc (i64.const 0) (i64.const 0)
        (i64.const 1) (i64.extend_i32_u (local.get $n))))
      (block $done
        (loop $next
          (br_if $done (i64.ge_u (local.get $i)
            (i64.extend_i32_u (local.get $n))))
          (i64.store8 (i64.add (local.get $p) (local.get $i))
            (local.get $i))
          (local.set $i (i64.add (local.get $i) (i64.const 1)))
          (br $next)))
      (i64.store (i64.const 16) (local.get $p))
      (i64.store (i64.const 24) (i64.extend_i32_u (local.get $n)))
      (i64.const 16))
    ;; tuple<u64, string>: u64 at 0, string (ptr, len) at 8 and 16
    (func (export "pair") (param $a i64) (param $p i64) (param $n i64)
      (result i64)
      (i64.store (i64.const 32) (local.get $a))
      (i64.store (i64.const 40) (local.get $p))
      (i64.store (i64.const 48) (local.get $n))
      (i64.const 32))
    (func (export "round") (param $p i64) (param $n i64) (result i64)
      (call $inner-echo (local.get $p) (local.get $n) (i64.const 64))
      (i64.const 64))
    ;; the string copied to the end of page 2 (its last byte the
    ;; memory's last)
    (func (export "high") (param $p i64) (param $n i64) (result i64)
      (local $at i64)
      (drop (memory.grow (i64.const 1)))
      (local.set $at (i64.sub (i64.const 131072) (local.get $n)))
      (memory.copy (local.get $at) (local.get $p) (local.get $n))
      (i64.store (i64.const 16) (local.get $at))
      (i64.store (i64.const 24) (local.get $n))
      (i64.const 16))
    (func (export "far") (param $p i64) (param $n i64) (result i64)
      (if (i64.lt_s (memory.grow (i64.sub (i64.const 65537) (memory.size)))
                    (i64.const 0))
        (then unreachable))
      (global.set $bump (i64.const 0x100000040))
      (call $inner-echo (local.get $p) (local.get $n)
        (i64.const 0x100000010))
      (i64.const 0x100000010))
    (func (export "oob") (result i64)
      (i64.store (i64.const 16) (i64.const 0x10000000000))
      (i64.store (i64.const 24) (i64.const 1))
      (i64.const 16))
    (func (export "wrap") (result i64)
      (i64.store (i64.const 16) (i64.const 16))
      (i64.store (i64.const 24) (i64.const 0x4000000000000001))
      (i64.const 16)))
  (core instance $main (instantiate $Main
    (with "libc" (instance $libc))
    (with "inner" (instance (export "echo" (func $inner-echo))))))

  (func (export "echo") (param "s" string) (result string)
    (canon lift (core func $main "echo") (memory $mem)
      (realloc (core func $libc "realloc"))))
  (func (export "sum") (param "xs" (list u32)) (result u64)
    (canon lift (core func $main "sum") (memory $mem)
      (realloc (core func $libc "realloc"))))
  (func (export "make") (param "n" u32) (result (list u8))
    (canon lift (core func $main "make") (memory $mem)
      (realloc (core func $libc "realloc"))))
  (func (export "pair") (param "a" u64) (param "s" string)
    (result (tuple u64 string))
    (canon lift (core func $main "pair") (memory $mem)
      (realloc (core func $libc "realloc"))))
  (func (export "round") (param "s" string) (result string)
    (canon lift (core func $main "round") (memory $mem)
      (realloc (core func $libc "realloc"))))
  (func (export "high") (param "s" string) (result string)
    (canon lift (core func $main "high") (memory $mem)
      (realloc (core func $libc "realloc"))))
  (func (export "far") (param "s" string) (result string)
    (canon lift (core func $main "far") (memory $mem)
      (realloc (core func $libc "realloc"))))
  (func (export "oob") (result string)
    (canon lift (core func $main "oob") (memory $mem)
      (realloc (core func $libc "realloc"))))
  (func (export "wrap") (result (list u32))
    (canon lift (core func $main "wrap") (memory $mem)
      (realloc (core func $libc "realloc"))))
)
