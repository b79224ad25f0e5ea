;; legacy-exceptions.wast - the exception-handling proposal's first form
;; (try, catch, catch_all, delegate, rethrow), which LLVM and Emscripten
;; emit for -fwasm-exceptions.  hostel's own cases, from the proposal's
;; semantics: regenerate the JSON and binaries beside it with
;;   wast2json --enable-exceptions --enable-tail-call \
;;     legacy-exceptions.wast -o legacy-exceptions.json
;; (wabt 1.0.32, Debian 12); tests/legacy-exceptions.sh runs them.

(module
  (tag $a (export "a") (param i32))
  (func (export "throw-a") (param i32) (local.get 0) (throw $a))
)
(register "other")

(module
  (tag $imp (import "other" "a") (param i32))
  (func $throw-imp (import "other" "throw-a") (param i32))
  (tag $e0)
  (tag $e1)
  (tag $ei (param i32))
  (tag $el (param i64))
  (tag $ef (param f32))
  (tag $ed (param f64))
  (tag $ev (param v128))
  (tag $epair (param i32 i64))

  (func $throw-if (param i32)
    (if (local.get 0) (then (throw $e0))))
  (func $raise (param i32)
    ;; 0: nothing, 1: $e0, 2: $e1, 3: $ei 7, else: trap
    (block $t (block $2 (block $1 (block $0 (block $n
      (br_table $n $0 $1 $2 $t (local.get 0)))
      (return))
      (throw $e0))
      (throw $e1))
      (throw $ei (i32.const 7)))
    (unreachable))

  ;; catches in order; the first whose tag matches wins, catch_all last
  (func (export "which") (param i32) (result i32)
    (try (result i32)
      (do (call $raise (local.get 0)) (i32.const 100))
      (catch $e1 (i32.const 1))
      (catch $e0 (i32.const 0))
      (catch $ei (i32.add (i32.const 1000)))
      (catch_all (i32.const -1))))

  (func (export "no-catch-all") (param i32) (result i32)
    (try (result i32)
      (do (call $raise (local.get 0)) (i32.const 100))
      (catch $e0 (i32.const 0))))

  (func (export "catchless") (param i32) (result i32)
    (try (result i32)
      (do (try (do (call $throw-if (local.get 0)))) (i32.const 5))
      (catch $e0 (i32.const 6))))

  ;; payloads of every number type, and two values
  (func (export "pay-i64") (param i64) (result i64)
    (try (result i64) (do (throw $el (local.get 0))) (catch $el)))
  (func (export "pay-f32") (param f32) (result f32)
    (try (result f32) (do (throw $ef (local.get 0))) (catch $ef)))
  (func (export "pay-f64") (param f64) (result f64)
    (try (result f64) (do (throw $ed (local.get 0))) (catch $ed)))
  (func (export "pay-v128") (param i64 i64) (result i64)
    (try (result i64)
      (do (throw $ev (i64x2.replace_lane 1
            (i64x2.splat (local.get 0)) (local.get 1))))
      (catch $ev (i64x2.extract_lane 1))))
  (func (export "pay-pair") (param i32 i64) (result i64)
    (try (result i64)
      (do (throw $epair (local.get 0) (local.get 1)))
      (catch $epair (i64.add (i64.extend_i32_u (i32.const 0)))
        (local.set 1) (i64.extend_i32_u) (local.get 1) (i64.sub))))

  ;; a catch clause returns from the function with the payload
  (func (export "catch-return") (param i32) (result i32)
    (try (do (throw $ei (local.get 0))) (catch $ei (return)))
    (i32.const -1))

  ;; an imported tag is caught by its identity, not by its type
  (func (export "imported") (param i32) (result i32)
    (try (result i32)
      (do (call $throw-imp (local.get 0)) (i32.const 0))
      (catch $ei (drop) (i32.const 1))
      (catch $imp (i32.const 2) (i32.add))))

  ;; a try with parameters: they are the body's, not the clause's
  (func (export "params") (param i32) (result i32)
    (local.get 0)
    (try (param i32) (result i32)
      (do (i32.const 10) (i32.add) (call $throw-if (local.get 0)))
      (catch $e0 (i32.const 99))))

  ;; locals written in the body are seen by the clause
  (func (export "locals") (param i32) (result i32) (local i32)
    (try
      (do (local.set 1 (i32.const 3))
          (call $throw-if (local.get 0))
          (local.set 1 (i32.const 4)))
      (catch $e0 (local.set 1 (i32.add (local.get 1) (i32.const 10)))))
    (local.get 1))

  ;; an exception thrown in a clause is not its own try's
  (func (export "throw-in-clause") (result i32)
    (try (result i32)
      (do
        (try (result i32)
          (do (throw $e0))
          (catch $e0 (throw $e1))
          (catch $e1 (i32.const 1))))
      (catch $e1 (i32.const 2))))

  ;; rethrow: from the clause, from a nested try in it, to an outer clause
  (func (export "rethrow") (param i32) (result i32)
    (try (result i32)
      (do
        (try (result i32)
          (do (call $raise (local.get 0)) (i32.const 0))
          (catch $e0 (rethrow 0))
          (catch_all (rethrow 0))))
      (catch $e0 (i32.const 10))
      (catch $e1 (i32.const 11))
      (catch $ei (i32.const 12) (i32.add))))
  (func (export "rethrow-outer") (result i32)
    (try (result i32)
      (do
        (try (result i32)
          (do (throw $ei (i32.const 1)))
          (catch $ei
            (drop)
            (try (result i32)
              (do (throw $e0))
              (catch $e0 (rethrow 1))))))
      (catch $ei (i32.const 40) (i32.add))
      (catch $e0 (i32.const -1))))
  (func (export "rethrow-in-block") (result i32)
    (try (result i32)
      (do
        (try
          (do (throw $e1))
          (catch_all (block (block (rethrow 2)))))
        (i32.const -1))
      (catch $e1 (i32.const 3))))

  ;; delegate: to an enclosing try (its catches apply), past the ones in
  ;; between, to a block, from inside a clause, to the caller
  (func (export "delegate-try") (param i32) (result i32)
    (try $t (result i32)
      (do (try (result i32)
            (do (call $throw-if (local.get 0)) (i32.const 1))
            (delegate $t)))
      (catch $e0 (i32.const 2))))
  (func (export "delegate-past") (result i32)
    (try $t (result i32)
      (do
        (try (result i32)
          (do
            (try (result i32)
              (do (try (result i32) (do (throw $e0)) (delegate $t)))
              (catch $e0 (i32.const 1))))
          (catch_all (i32.const 2))))
      (catch $e0 (i32.const 3))))
  (func (export "delegate-block") (result i32)
    (try (result i32)
      (do (block (try (do (throw $e0)) (delegate 0))) (i32.const 0))
      (catch $e0 (i32.const 4))))
  (func (export "delegate-in-clause") (result i32)
    (try (result i32)
      (do
        (try $in (result i32)
          (do (throw $e0))
          (catch $e0
            (try (result i32) (do (throw $e1)) (delegate $in)))))
      (catch $e1 (i32.const 5))))
  (func (export "delegate-caller") (result i32)
    (try (result i32)
      (do
        (try (do (throw $e0)) (delegate 0))
        (i32.const 0))
      (catch $e0 (i32.const -1)))
    (drop)
    (try (do (try (do (throw $e1)) (delegate 1))) (catch_all))
    (i32.const 0))
  (func (export "delegate-chain") (result i32)
    (try $outer (result i32)
      (do
        (try $mid (result i32)
          (do
            (try (result i32)
              (do
                (try (result i32) (do (throw $e0)) (delegate 0)))
              (delegate $mid)))
          (catch $e1 (i32.const -1))))
      (catch $e0 (i32.const 6))))
  (func (export "delegate-no-throw") (result i32)
    (try $t (result i32)
      (do (try (result i32) (do (i32.const 7)) (delegate $t)))
      (catch_all (i32.const -1))))

  ;; branches out of a body, a clause and a delegate's body
  (func (export "branches") (param i32) (result i32)
    (block $out (result i32)
      (try (result i32)
        (do
          (drop (br_if $out (i32.const 8) (i32.eqz (local.get 0))))
          (call $throw-if (local.get 0))
          (i32.const 0))
        (catch $e0
          (br $out (i32.const 9))))))
  (func (export "br-delegate") (result i32)
    (block $b (result i32)
      (try (result i32) (do (br $b (i32.const 10))) (delegate 0))))

  ;; traps are not exceptions: catch_all does not see them
  (func (export "trap") (param i32) (result i32)
    (try (result i32)
      (do (i32.div_u (i32.const 1) (local.get 0)))
      (catch_all (i32.const -1))))

  ;; loops in bodies and clauses, many throws
  (func (export "count") (param i32) (result i32) (local i32)
    (loop $l
      (try
        (do (call $throw-if (i32.and (local.get 0) (i32.const 1))))
        (catch $e0 (local.set 1 (i32.add (local.get 1) (i32.const 1)))))
      (br_if $l (local.tee 0 (i32.sub (local.get 0) (i32.const 1)))))
    (local.get 1))

  ;; a return_call in a try leaves it: the callee's throw is the caller's
  (func $throw-void (throw $e0))
  (func (export "tail") (try (do (return_call $throw-void)) (catch_all)))
)

(assert_return (invoke "which" (i32.const 0)) (i32.const 100))
(assert_return (invoke "which" (i32.const 1)) (i32.const 0))
(assert_return (invoke "which" (i32.const 2)) (i32.const 1))
(assert_return (invoke "which" (i32.const 3)) (i32.const 1007))
(assert_trap (invoke "which" (i32.const 4)) "unreachable")
(assert_return (invoke "no-catch-all" (i32.const 1)) (i32.const 0))
(assert_exception (invoke "no-catch-all" (i32.const 2)))
(assert_return (invoke "catchless" (i32.const 0)) (i32.const 5))
(assert_return (invoke "catchless" (i32.const 1)) (i32.const 6))
(assert_return (invoke "pay-i64" (i64.const -5)) (i64.const -5))
(assert_return (invoke "pay-f32" (f32.const -0.5)) (f32.const -0.5))
(assert_return (invoke "pay-f64" (f64.const 1e300)) (f64.const 1e300))
(assert_return (invoke "pay-v128" (i64.const 1) (i64.const 77)) (i64.const 77))
(assert_return (invoke "pay-pair" (i32.const 9) (i64.const 30)) (i64.const -21))
(assert_return (invoke "catch-return" (i32.const 42)) (i32.const 42))
(assert_return (invoke "imported" (i32.const 5)) (i32.const 7))
(assert_return (invoke "params" (i32.const 0)) (i32.const 10))
(assert_return (invoke "params" (i32.const 1)) (i32.const 99))
(assert_return (invoke "locals" (i32.const 0)) (i32.const 4))
(assert_return (invoke "locals" (i32.const 1)) (i32.const 13))
(assert_return (invoke "throw-in-clause") (i32.const 2))
(assert_return (invoke "rethrow" (i32.const 0)) (i32.const 0))
(assert_return (invoke "rethrow" (i32.const 1)) (i32.const 10))
(assert_return (invoke "rethrow" (i32.const 2)) (i32.const 11))
(assert_return (invoke "rethrow" (i32.const 3)) (i32.const 19))
(assert_return (invoke "rethrow-outer") (i32.const 41))
(assert_return (invoke "rethrow-in-block") (i32.const 3))
(assert_return (invoke "delegate-try" (i32.const 0)) (i32.const 1))
(assert_return (invoke "delegate-try" (i32.const 1)) (i32.const 2))
(assert_return (invoke "delegate-past") (i32.const 3))
(assert_return (invoke "delegate-block") (i32.const 4))
(assert_return (invoke "delegate-in-clause") (i32.const 5))
(assert_exception (invoke "delegate-caller"))
(assert_return (invoke "delegate-chain") (i32.const 6))
(assert_return (invoke "delegate-no-throw") (i32.const 7))
(assert_return (invoke "branches" (i32.const 0)) (i32.const 8))
(assert_return (invoke "branches" (i32.const 1)) (i32.const 9))
(assert_return (invoke "br-delegate") (i32.const 10))
(assert_return (invoke "trap" (i32.const 2)) (i32.const 0))
(assert_trap (invoke "trap" (i32.const 0)) "integer divide by zero")
(assert_return (invoke "count" (i32.const 1001)) (i32.const 501))
(assert_exception (invoke "tail"))

;; validation
(assert_invalid
  (module (func (result i32) (try (result i32) (do (i64.const 1)))))
  "type mismatch")
(assert_invalid
  (module (tag (param i64)) (func (result i32) (try (result i32) (do (i32.const 1)) (catch 0))))
  "type mismatch")
(assert_invalid
  (module (func (try (do) (catch_all (i32.const 1)))))
  "type mismatch")
(assert_invalid
  (module (func (block (rethrow 0))))
  "invalid rethrow label")
(assert_invalid
  (module (func (try (do (rethrow 0)) (catch_all))))
  "invalid rethrow label")
(assert_invalid
  (module (func (try (do) (delegate 1))))
  "unknown label")
(assert_invalid
  (module (func (try (do) (catch 0))))
  "unknown tag")
(assert_invalid
  (module (tag (param i32)) (func (try (do) (catch 0 (drop) (drop)))))
  "type mismatch")
