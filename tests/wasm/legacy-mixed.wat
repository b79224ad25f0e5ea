;; legacy-mixed.wat - legacy exception instructions beside try_table and
;; throw_ref in one module (wabt 1.0.32 has no try_table, so this one is
;; built with `jco parse legacy-mixed.wat -o legacy-mixed.wasm`, whose
;; text format takes the legacy instructions in their flat form only);
;; legacy-mixed.json's commands call it (tests/cxx-guest.sh).
(module
  (tag $ei (param i32))
  (tag $e0)
  ;; a try_table catches what a legacy clause rethrows, and a legacy
  ;; catch what throw_ref throws again
  (func (export "mixed") (result i32)
    (block $h (result exnref)
      (try_table (catch_all_ref $h)
        try
          (throw $ei (i32.const 20))
        catch $ei
          drop
          rethrow 0
        end)
      (return (i32.const -1)))
    try (param exnref) (result i32)
      throw_ref
    catch $ei
      i32.const 1
      i32.add
    end)
  ;; a delegate passes over a try_table between it and its label
  (func (export "delegate-past-table") (result i32)
    try $t (result i32)
      (block $h (result i32)
        (try_table (result i32) (catch $ei $h)
          try (result i32)
            (throw $ei (i32.const 5))
          delegate $t))
    catch $ei
      i32.const 100
      i32.add
    end)
  ;; a try_table inside a clause catches an exception of the clause, and
  ;; the clause still rethrows its own afterwards
  (func (export "table-in-clause") (result i32)
    try (result i32)
      try (result i32)
        (throw $ei (i32.const 3))
      catch $ei
        drop
        (block $h
          (try_table (catch $e0 $h) (throw $e0)))
        rethrow 0
      end
    catch $ei
      i32.const 1000
      i32.add
    end)
)
