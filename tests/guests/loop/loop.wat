;; loop.wat - a call longer than a service turn, for snapshots of a
;; thread a fuel check stopped mid-code (runtime/wasm/snapshot_exec.c;
;; tests/unit/run/test_snapshot.c test_stopped_out_of_fuel).
;;
;;   crunch(n: u32) -> u32  $work(n): n rounds of a loop that calls $mix
;;                          (so a turn's fuel runs out at a back-edge or
;;                          at a call, with crunch as a caller frame and
;;                          values in locals and on the operand stack);
;;                          the result goes to `last` and runs counts
;;   start-crunch: async func(n: u32)  returns at once (task.return), then
;;                          crunches as background work of its task
;;                          (a stackful async lift: no callback)
;;   start-crunch-refs: async func(n: u32)  the same with $work-refs, whose
;;                          frame holds references all along: the function
;;                          it calls in locals (a (ref null $t), a (ref $t),
;;                          a funcref), one on the operand stack across its
;;                          calls and the loop's parameter; it yields every
;;                          64th round (a frame blocked in a host call) and
;;                          spins in an inner loop (a conditional back-edge);
;;                          a null externref goes round a local, a global
;;                          and a table (a component cannot make another)
;;   start-crunch-exn: async func(n: u32)  the same with $work-exn, whose
;;                          frames hold exceptions all along (issue 22:
;;                          exceptions held by suspended frames): an
;;                          $e in a local, a $link (payload: a number and
;;                          that $e) in another, replaced every round, one
;;                          on the operand stack as the loop's parameter;
;;                          every 16th round a legacy try's catch clause
;;                          (its caught exception in a slot of its own)
;;                          yields and spins, then rethrows
;;   last() -> u32          the last result
;;   runs() -> u32          how many crunches ended
;;
;; Regenerate loop.wasm: tests/guests/build.sh wat.
(component
  (core func $task.return (canon task.return))
  (core func $yield (canon thread.yield))
  (core module $Loop
    (import "" "task.return" (func $task.return))
    (import "" "yield" (func $yield (result i32)))
    (type $mixty (func (param i32 i32) (result i32)))
    (global $last (mut i32) (i32.const 0))
    (global $runs (mut i32) (i32.const 0))
    (func $mix (param $a i32) (param $i i32) (result i32)
      (i32.add (i32.mul (local.get $a) (i32.const 31))
               (i32.xor (local.get $i) (i32.const 0x5bd1e995))))
    (func $work (param $n i32) (result i32)
      (local $i i32) (local $acc i32) (local $wide i64)
      (local.set $acc (i32.const 7))
      (block $done
        (loop $next
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          ;; a value on the operand stack across the call
          (local.set $acc
            (i32.add (i32.rotl (local.get $acc) (i32.const 3))
                     (call $mix (local.get $acc) (local.get $i))))
          (local.set $wide (i64.add (local.get $wide)
            (i64.extend_i32_u (local.get $acc))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $next)))
      (i32.xor (local.get $acc) (i32.wrap_i64 (local.get $wide))))
    (func $mix2 (param $a i32) (param $i i32) (result i32)
      (i32.xor (i32.mul (local.get $a) (i32.const 0x01000193))
               (local.get $i)))
    (elem declare func $mix $mix2)
    (global $ext (mut externref) (ref.null extern))
    (table $ext 2 externref)
    (func $work-refs (param $n i32) (result i32)
      (local $i i32) (local $k i32) (local $acc i32)
      (local $f (ref null $mixty)) (local $g (ref $mixty))
      (local $tmp (ref null $mixty)) (local $any funcref)
      (local $ext externref)
      (local.set $acc (i32.const 7))
      (local.set $f (ref.func $mix))
      (local.set $g (ref.func $mix2))
      (local.set $any (ref.func $mix2))
      (block $done
        (ref.func $mix2)
        ;; the loop's parameter: the function a round ends with
        (loop $next (param (ref $mixty))
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          ;; [p]: a reference below every call of the round
          local.get $acc
          i32.const 3
          i32.rotl
          local.get $acc
          local.get $i
          local.get $f
          call_ref $mixty
          i32.add
          local.get $i
          local.get $g
          call_ref $mixty
          local.set $acc
          (if (i32.eqz (i32.and (local.get $i) (i32.const 63)))
            (then (drop (call $yield))))
          ;; a few turns of a loop that holds nothing of its own
          (local.set $k (i32.const 0))
          (loop $spin
            (local.set $acc (i32.add (local.get $acc) (local.get $k)))
            (br_if $spin (i32.lt_u
              (local.tee $k (i32.add (local.get $k) (i32.const 1)))
              (i32.const 3))))
          ;; the only externref a component can hold is null: it goes
          ;; round a table, a global and a local across every park
          (table.set $ext (i32.and (local.get $i) (i32.const 1))
            (local.get $ext))
          (local.set $ext (table.get $ext (i32.const 0)))
          (global.set $ext (local.get $ext))
          ;; f, g and the parameter change places
          (local.set $tmp (local.get $f))
          (local.set $f (local.get $g))
          (local.set $g)
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (ref.as_non_null (local.get $tmp))
          ;; odd rounds go back with br_if, even ones with br
          (br_if $next (i32.and (local.get $i) (i32.const 1)))
          (br $next)))
      (i32.add (i32.add (local.get $acc) (ref.is_null (local.get $any)))
               (i32.add (ref.is_null (global.get $ext))
                        (ref.is_null (local.get $ext)))))
    ;; exceptions a frame holds (start-crunch-exn)
    (tag $e (param i32))
    (tag $link (param i32 exnref))
    (func $make (param $v i32) (result exnref)
      (block $h (result exnref)
        (try_table (catch_all_ref $h) (throw $e (local.get $v)))
        unreachable))
    (func $make-link (param $v i32) (param $x exnref) (result exnref)
      (block $h (result exnref)
        (try_table (catch_all_ref $h)
          (throw $link (local.get $v) (local.get $x)))
        unreachable))
    ;; the number an $e or a $link carries
    (func $payload (param $x exnref) (result i32)
      (block $l (result i32 exnref)
        (block $k (result i32)
          (try_table (catch $e $k) (catch $link $l)
            (throw_ref (local.get $x)))
          unreachable)
        return)
      drop)
    ;; a legacy catch clause that yields and spins holding what it
    ;; caught, then rethrows it: v + 1 back
    (func $legacy (param $v i32) (result i32)
      (local $k i32)
      (block $out (result i32)
        (try_table (catch $e $out)
          try
            local.get $v
            i32.const 1
            i32.add
            throw $e
          catch $e
            local.set $k
            call $yield
            drop
            loop $spin
              local.get $k
              i32.const 1
              i32.add
              local.tee $k
              local.get $v
              i32.const 40
              i32.add
              i32.lt_u
              br_if $spin
            end
            rethrow 0
          end)
        unreachable))
    (func $work-exn (param $n i32) (result i32)
      (local $i i32) (local $k i32) (local $acc i32)
      (local $y exnref) (local $x (ref null exn))
      (local.set $acc (i32.const 7))
      (local.set $y (call $make (i32.const 11)))
      (local.set $x (call $make-link (i32.const 1) (local.get $y)))
      (block $done
        (call $make (i32.const 5))
        ;; the loop's parameter: an exception no global holds
        (loop $next (param exnref)
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (local.set $acc
            (i32.add (i32.rotl (local.get $acc) (i32.const 3))
                     (call $payload (local.get $x))))
          (local.set $acc (i32.xor (local.get $acc)
                                   (call $payload (local.get $y))))
          (if (i32.eqz (i32.and (local.get $i) (i32.const 15)))
            (then (local.set $acc (call $legacy (local.get $acc)))))
          (local.set $k (i32.const 0))
          (loop $spin
            (local.set $acc (i32.add (local.get $acc) (local.get $k)))
            (br_if $spin (i32.lt_u
              (local.tee $k (i32.add (local.get $k) (i32.const 1)))
              (i32.const 3))))
          ;; the parameter's number, and a new one in its place
          call $payload
          local.get $acc
          i32.add
          local.set $acc
          (local.set $x (call $make-link (local.get $acc) (local.get $y)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (call $make (i32.and (local.get $acc) (i32.const 255)))
          (br_if $next (i32.and (local.get $i) (i32.const 1)))
          (br $next)))
      (local.get $acc))
    (func (export "start-crunch-exn") (param $n i32)
      (local $r i32)
      (call $task.return)
      (local.set $r (i32.add (call $work-exn (local.get $n)) (i32.const 1)))
      (global.set $last (local.get $r))
      (global.set $runs (i32.add (global.get $runs) (i32.const 1))))
    (func (export "start-crunch-refs") (param $n i32)
      (local $r i32)
      (call $task.return)
      (local.set $r (i32.add (call $work-refs (local.get $n)) (i32.const 1)))
      (global.set $last (local.get $r))
      (global.set $runs (i32.add (global.get $runs) (i32.const 1))))
    (func (export "crunch") (param $n i32) (result i32)
      (local $r i32)
      (local.set $r (i32.add (call $work (local.get $n)) (i32.const 1)))
      (global.set $last (local.get $r))
      (global.set $runs (i32.add (global.get $runs) (i32.const 1)))
      (local.get $r))
    (func (export "start-crunch") (param $n i32)
      (local $r i32)
      (call $task.return)
      (local.set $r (i32.add (call $work (local.get $n)) (i32.const 1)))
      (global.set $last (local.get $r))
      (global.set $runs (i32.add (global.get $runs) (i32.const 1))))
    (func (export "last") (result i32) (global.get $last))
    (func (export "runs") (result i32) (global.get $runs)))
  (core instance $l (instantiate $Loop (with "" (instance
    (export "task.return" (func $task.return))
    (export "yield" (func $yield))))))
  (func (export "crunch") (param "n" u32) (result u32)
    (canon lift (core func $l "crunch")))
  (func (export "start-crunch") async (param "n" u32)
    (canon lift (core func $l "start-crunch") async))
  (func (export "start-crunch-refs") async (param "n" u32)
    (canon lift (core func $l "start-crunch-refs") async))
  (func (export "start-crunch-exn") async (param "n" u32)
    (canon lift (core func $l "start-crunch-exn") async))
  (func (export "last") (result u32)
    (canon lift (core func $l "last")))
  (func (export "runs") (result u32)
    (canon lift (core func $l "runs")))
)
