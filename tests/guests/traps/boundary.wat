;; boundary.wat - exceptions that reach a component's edge, and the
;; canonical ABI's other edges a guest can break (issue 21 point 5:
;; each message of docs/traps.md in a test that triggers it).  An
;; exception never crosses a component boundary: whatever core code the
;; canonical ABI runs (a lifted export, its callback, a realloc, a
;; post-return) ends the call with "uncaught exception propagated out of
;; component" when an exception leaves it, and no try_table of another
;; component catches it.  tests/traps-guest.sh calls each export under
;; `hostel run --invoke` and as a service.
;;
;;   throw-out: func()                the lifted core function throws
;;   throw-async: async func()        a stackful async lift throws after
;;                                    a thread.yield
;;   throw-callback: async func()     a callback lift's callback throws
;;   realloc-throws: func(s: string)  the realloc that lowers s throws
;;   realloc-waits: func(s: string)   the realloc that lowers s waits on
;;                                    a waitable set: it may not leave its
;;                                    instance, so the wait traps first
;;                                    (no guest code the canonical ABI
;;                                    calls ever blocks)
;;   post-return-throws: func() -> u32
;;                                    the post-return throws (the caller
;;                                    has its result: a service is then
;;                                    poisoned, `hostel run` traps)
;;   catch-callee: func() -> u32      calls $Callee's boom inside a
;;                                    catch_all: the exception must not
;;                                    reach the catch (it would return 1)
;;   catch-own-realloc: func() -> u32 calls $Callee's word, whose string
;;                                    result our own realloc lowers, and
;;                                    it throws inside our catch_all
;;   catch-callee-realloc: func() -> u32
;;                                    passes $Callee's take a string:
;;                                    its realloc throws, inside our
;;                                    catch_all
;;   own-from-borrow: func() -> u32   $Mid's give-back returns the borrow
;;                                    it was lent as an own handle
;;
;; Regenerate boundary.wasm: tests/guests/build.sh wat.
(component
  ;; ---- one component's own edges ------------------------------------
  (core module $Memory (memory (export "mem") 1))
  (core instance $memory (instantiate $Memory))

  (core module $Own
    (import "" "mem" (memory 1))
    (import "" "yield" (func $yield (result i32)))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable-set.wait" (func $waitable-set.wait (param i32 i32) (result i32)))
    (tag $t)
    (func (export "throw-out") (throw $t))
    (func (export "throw-async")
      (drop (call $yield))
      (throw $t))
    (func (export "throw-callback") (result i32) (i32.const 1 (; YIELD ;)))
    (func (export "callback") (param i32 i32 i32) (result i32) (throw $t))
    (func (export "realloc-throws") (param i32 i32))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (throw $t))
    ;; a realloc that would block: it may not leave the instance, so the
    ;; wait traps before it could block
    (func (export "realloc-waits") (param i32 i32 i32 i32) (result i32)
      (drop (call $waitable-set.wait (call $waitable-set.new) (i32.const 0)))
      (i32.const 0))
    (func (export "post-return-throws") (result i32) (i32.const 7))
    (func (export "post-return") (param i32) (throw $t)))
  (core func $yield (canon thread.yield))
  (core func $waitable-set.new (canon waitable-set.new))
  (core func $waitable-set.wait (canon waitable-set.wait (memory (core memory $memory "mem"))))
  (core instance $own (instantiate $Own
    (with "" (instance
      (export "mem" (memory $memory "mem"))
      (export "yield" (func $yield))
      (export "waitable-set.new" (func $waitable-set.new))
      (export "waitable-set.wait" (func $waitable-set.wait))))))

  (func (export "throw-out") (canon lift (core func $own "throw-out")))
  (func (export "throw-async") async
    (canon lift (core func $own "throw-async") async))
  (func (export "throw-callback") async
    (canon lift (core func $own "throw-callback") async
      (callback (core func $own "callback"))))
  (func (export "realloc-throws") (param "s" string)
    (canon lift (core func $own "realloc-throws")
      (memory (core memory $memory "mem"))
      (realloc (core func $own "realloc"))))
  (func (export "realloc-waits") (param "s" string)
    (canon lift (core func $own "realloc-throws")
      (memory (core memory $memory "mem"))
      (realloc (core func $own "realloc-waits"))))
  (func (export "post-return-throws") (result u32)
    (canon lift (core func $own "post-return-throws")
      (post-return (core func $own "post-return"))))

  ;; ---- across a component boundary ----------------------------------
  (component $Callee
    (core module $Libc
      (memory (export "mem") 1)
      (data (i32.const 64) "word"))
    (core instance $libc (instantiate $Libc))
    (core module $M
      (import "" "mem" (memory 1))
      (tag $t)
      (func (export "boom") (throw $t))
      ;; word's result: (pointer, length) at 32
      (func (export "word") (result i32)
        (i32.store (i32.const 32) (i32.const 64))
        (i32.store (i32.const 36) (i32.const 4))
        (i32.const 32))
      (func (export "take") (param i32 i32))
      (func (export "realloc") (param i32 i32 i32 i32) (result i32) (throw $t)))
    (core instance $m (instantiate $M (with "" (instance (export "mem" (memory $libc "mem"))))))
    (func (export "boom") (canon lift (core func $m "boom")))
    (func (export "word") (result string)
      (canon lift (core func $m "word") (memory (core memory $libc "mem"))))
    (func (export "take") (param "s" string)
      (canon lift (core func $m "take") (memory (core memory $libc "mem"))
        (realloc (core func $m "realloc")))))
  (instance $callee (instantiate $Callee))

;; $Res defines a resource; $Mid, which only imports its type, gives
  ;; back the borrow it is lent as an own handle (the owner $Res would be
  ;; lent the rep itself, not a handle)
  (component $Res
    (type $r (resource (rep i32)))
    (core func $new (canon resource.new $r))
    (core module $M
      (import "" "new" (func $new (param i32) (result i32)))
      (func (export "make") (result i32) (call $new (i32.const 5))))
    (core instance $m (instantiate $M (with "" (instance (export "new" (func $new))))))
    (export $R "r" (type $r))
    (func (export "make") (result (own $R)) (canon lift (core func $m "make"))))
  (instance $res (instantiate $Res))
  (component $Mid
    (import "r" (type $r (sub resource)))
    (core module $M (func (export "give-back") (param i32) (result i32) (local.get 0)))
    (core instance $m (instantiate $M))
    (func (export "give-back") (param "x" (borrow $r)) (result (own $r))
      (canon lift (core func $m "give-back"))))
  (instance $mid (instantiate $Mid (with "r" (type $res "r"))))

  (core module $CallerMem (memory (export "mem") 1) (data (i32.const 128) "hi"))
  (core instance $callermem (instantiate $CallerMem))
  (core module $Thrower
    (tag $t)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (throw $t)))
  (core instance $thrower (instantiate $Thrower))
  (core func $boom (canon lower (func $callee "boom")))
  (core func $word (canon lower (func $callee "word")
    (memory (core memory $callermem "mem"))
    (realloc (core func $thrower "realloc"))))
  (core func $take (canon lower (func $callee "take")
    (memory (core memory $callermem "mem"))))
  (core func $make (canon lower (func $res "make")))
  (core func $give-back (canon lower (func $mid "give-back")))
  (core module $Caller
    (import "" "boom" (func $boom))
    (import "" "word" (func $word (param i32)))
    (import "" "take" (func $take (param i32 i32)))
    (import "" "make" (func $make (result i32)))
    (import "" "give-back" (func $give-back (param i32) (result i32)))
    ;; each returns 1 when the exception reached its catch (it must not)
    (func (export "catch-callee") (result i32)
      (block $caught
        (try_table (catch_all $caught) (call $boom))
        (return (i32.const 0)))
      (i32.const 1))
    (func (export "catch-own-realloc") (result i32)
      (block $caught
        (try_table (catch_all $caught) (call $word (i32.const 0)))
        (return (i32.const 0)))
      (i32.const 1))
    (func (export "catch-callee-realloc") (result i32)
      (block $caught
        (try_table (catch_all $caught) (call $take (i32.const 128) (i32.const 2)))
        (return (i32.const 0)))
      (i32.const 1))
    (func (export "own-from-borrow") (result i32)
      (call $give-back (call $make))))
  (core instance $caller (instantiate $Caller
    (with "" (instance
      (export "boom" (func $boom))
      (export "word" (func $word))
      (export "take" (func $take))
      (export "make" (func $make))
      (export "give-back" (func $give-back))))))
  (func (export "catch-callee") (result u32) (canon lift (core func $caller "catch-callee")))
  (func (export "catch-own-realloc") (result u32)
    (canon lift (core func $caller "catch-own-realloc")))
  (func (export "catch-callee-realloc") (result u32)
    (canon lift (core func $caller "catch-callee-realloc")))
  (func (export "own-from-borrow") (result u32)
    (canon lift (core func $caller "own-from-borrow"))))
