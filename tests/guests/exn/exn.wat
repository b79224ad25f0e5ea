;; exn.wat - a guest that keeps caught exceptions (exnref) across calls,
;; in a global, a table and other exceptions' payloads, for snapshots of
;; live exception objects (runtime/wasm/snapshot.c put_heap;
;; tests/unit/run/test_snapshot.c test_exceptions_round_trip).
;;
;;   keep(n)       slot n % 4 of the table gets the exception ($e n, v128
;;                 splat n); the chain (a global) gets ($link chain n), an
;;                 exception whose payload holds the chain before it
;;   sum() -> u32  the chain's n's, plus 1000 x (n + lane 3 of the v128)
;;                 of each slot's exception: unpacked by throw_ref and
;;                 catch, so every payload value is read back
;;   keep-fn()     a global gets ($fn (ref.func $seven))
;;   call-kept() -> u32  the function that exception carries, called (7),
;;                 or 0 when there is none
;;   clear()       the chain, the slots and the function's exception null
;;   count() -> u32  how many exceptions the chain holds
;;
;; Regenerate exn.wasm: tests/guests/build.sh wat.
(component
  (core module $Exn
    (type $r (func (result i32)))
    (tag $e (param i32 v128))
    (tag $link (param exnref i32))
    (tag $fn (param funcref))
    (global $chain (mut exnref) (ref.null exn))
    (global $kept-fn (mut exnref) (ref.null exn))
    (table $slots 4 exnref)
    (table $fns 1 funcref)
    (func $seven (type $r) (i32.const 7))
    (elem declare func $seven)

    (func (export "keep") (param $n i32)
      (table.set $slots (i32.rem_u (local.get $n) (i32.const 4))
        (block $h (result exnref)
          (try_table (catch_all_ref $h)
            (throw $e (local.get $n) (i32x4.splat (local.get $n))))
          unreachable))
      (global.set $chain
        (block $h (result exnref)
          (try_table (catch_all_ref $h)
            (throw $link (global.get $chain) (local.get $n)))
          unreachable)))

    (func (export "sum") (result i32)
      (local $acc i32) (local $x exnref) (local $i i32) (local $v v128)
      (local.set $x (global.get $chain))
      (block $done
        (loop $next
          (br_if $done (ref.is_null (local.get $x)))
          ;; ($link prev n): n goes to the sum, prev is the next link
          (block $h (result exnref i32)
            (try_table (catch $link $h)
              (throw_ref (local.get $x)))
            unreachable)
          local.get $acc
          i32.add
          local.set $acc
          local.set $x
          (br $next)))
      (block $end
        (loop $slot
          (br_if $end (i32.ge_u (local.get $i) (i32.const 4)))
          (if (i32.eqz (ref.is_null (table.get $slots (local.get $i))))
            (then
              (block $h (result i32 v128)
                (try_table (catch $e $h)
                  (throw_ref (table.get $slots (local.get $i))))
                unreachable)
              local.set $v
              (i32x4.extract_lane 3 (local.get $v))
              i32.add
              i32.const 1000
              i32.mul
              local.get $acc
              i32.add
              local.set $acc))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $slot)))
      (local.get $acc))

    (func (export "keep-fn")
      (global.set $kept-fn
        (block $h (result exnref)
          (try_table (catch_all_ref $h)
            (throw $fn (ref.func $seven)))
          unreachable)))

    (func (export "call-kept") (result i32)
      (local $f funcref)
      (if (ref.is_null (global.get $kept-fn))
        (then (return (i32.const 0))))
      (block $h (result funcref)
        (try_table (catch $fn $h)
          (throw_ref (global.get $kept-fn)))
        unreachable)
      local.set $f
      (table.set $fns (i32.const 0) (local.get $f))
      (call_indirect $fns (type $r) (i32.const 0)))

    (func (export "clear")
      (global.set $chain (ref.null exn))
      (global.set $kept-fn (ref.null exn))
      (table.fill $slots (i32.const 0) (ref.null exn) (i32.const 4)))

    (func (export "count") (result i32)
      (local $n i32) (local $x exnref)
      (local.set $x (global.get $chain))
      (block $done
        (loop $next
          (br_if $done (ref.is_null (local.get $x)))
          (block $h (result exnref i32)
            (try_table (catch $link $h)
              (throw_ref (local.get $x)))
            unreachable)
          drop
          local.set $x
          (local.set $n (i32.add (local.get $n) (i32.const 1)))
          (br $next)))
      (local.get $n))
  )
  (core instance $x (instantiate $Exn))

  (func (export "keep") (param "n" u32)
    (canon lift (core func $x "keep")))
  (func (export "sum") (result u32)
    (canon lift (core func $x "sum")))
  (func (export "keep-fn")
    (canon lift (core func $x "keep-fn")))
  (func (export "call-kept") (result u32)
    (canon lift (core func $x "call-kept")))
  (func (export "clear")
    (canon lift (core func $x "clear")))
  (func (export "count") (result u32)
    (canon lift (core func $x "count")))
)
