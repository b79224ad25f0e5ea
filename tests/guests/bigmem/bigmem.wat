;; bigmem.wat - a memory grown to 65,530 pages (just under 4 GiB) and
;; strings near and past 2^31 (issue 21 point 2).  grow() grows by
;; 65,529 pages and returns the old size (1) or -1; the string exports
;; return (ptr, len) pairs in that memory:
;;   high()  32 NUL bytes at 0x8000_0010 (above 2^31)
;; (each string export grows the memory first when it is not grown yet)
;;   edge()  the last 16 bytes of the memory
;;   oob()   16 bytes starting 8 before the end: string content out-of-bounds
;;   long()  2^31 bytes at 0: string length exceeds the maximum
;; Regenerate: jco parse bigmem.wat -o bigmem.wasm
(component
  (core module $m
    (memory (export "mem") 1)
    (global $end i32 (i32.const -393216)) ;; 65530 * 65536 mod 2^32
    (func (export "grow") (result i32) (memory.grow (i32.const 65529)))
    (func $pair (param $p i32) (param $l i32) (result i32)
      ;; each export runs in a fresh `hostel run`: grow first
      (if (i32.lt_u (memory.size) (i32.const 65530))
        (then (drop (memory.grow (i32.const 65529)))))
      (i32.store (i32.const 0) (local.get $p))
      (i32.store (i32.const 4) (local.get $l))
      (i32.const 0))
    (func (export "high") (result i32)
      (call $pair (i32.const 0x80000010) (i32.const 32)))
    (func (export "edge") (result i32)
      (call $pair (i32.sub (global.get $end) (i32.const 16)) (i32.const 16)))
    (func (export "oob") (result i32)
      (call $pair (i32.sub (global.get $end) (i32.const 8)) (i32.const 16)))
    (func (export "long") (result i32)
      (call $pair (i32.const 16) (i32.const 0x80000000))))
  (core instance $i (instantiate $m))
  (alias core export $i "mem" (core memory $mem))
  (func (export "grow") (result s32) (canon lift (core func $i "grow")))
  (func (export "high") (result string)
    (canon lift (core func $i "high") (memory $mem)))
  (func (export "edge") (result string)
    (canon lift (core func $i "edge") (memory $mem)))
  (func (export "oob") (result string)
    (canon lift (core func $i "oob") (memory $mem)))
  (func (export "long") (result string)
    (canon lift (core func $i "long") (memory $mem)))
)
