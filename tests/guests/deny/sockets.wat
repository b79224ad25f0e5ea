;; sockets.wat - a guest of wasi:sockets@0.2.0 (the subset it calls),
;; for deny-by-default (runtime/wasi/deny.c): `tcp` asks for a TCP
;; socket and returns the error-code case it got (1: access-denied) or
;; 65535 when it got a socket; `net` returns the handle of
;; instance-network's network (a resource that is nothing, > 0).
;; Regenerate: jco parse sockets.wat -o sockets.wasm
(component
  (import "wasi:sockets/network@0.2.0" (instance $net
    (export "network" (type (sub resource)))
    (type $ec (enum "unknown" "access-denied" "not-supported"
      "invalid-argument" "out-of-memory" "timeout" "concurrency-conflict"
      "not-in-progress" "would-block" "invalid-state" "new-socket-limit"
      "address-not-bindable" "address-in-use" "remote-unreachable"
      "connection-refused" "connection-reset" "connection-aborted"
      "datagram-too-large" "name-unresolvable" "temporary-resolver-failure"
      "permanent-resolver-failure"))
    (export "error-code" (type (eq $ec)))
    (type $af (enum "ipv4" "ipv6"))
    (export "ip-address-family" (type (eq $af)))
  ))
  (alias export $net "network" (type $network))
  (alias export $net "error-code" (type $error-code))
  (alias export $net "ip-address-family" (type $ipaf))
  (import "wasi:sockets/instance-network@0.2.0" (instance $inet
    (alias outer 1 $network (type $n))
    (export "network" (type $nn (eq $n)))
    (export "instance-network" (func (result (own $nn))))
  ))
  (import "wasi:sockets/tcp@0.2.0" (instance $tcp
    (export "tcp-socket" (type (sub resource)))
  ))
  (alias export $tcp "tcp-socket" (type $sock))
  (import "wasi:sockets/tcp-create-socket@0.2.0" (instance $tcs
    (alias outer 1 $error-code (type $e0))
    (export "error-code" (type $e (eq $e0)))
    (alias outer 1 $ipaf (type $a0))
    (export "ip-address-family" (type $a (eq $a0)))
    (alias outer 1 $sock (type $s0))
    (export "tcp-socket" (type $s (eq $s0)))
    (export "create-tcp-socket"
      (func (param "address-family" $a) (result (result (own $s) (error $e)))))
  ))
  (core module $m
    (import "h" "create" (func $create (param i32 i32)))
    (import "h" "inet" (func $inet (result i32)))
    (import "h" "mem" (memory 1))
    (func (export "tcp") (result i32)
      (call $create (i32.const 0) (i32.const 16))
      (if (result i32) (i32.load8_u (i32.const 16))
        (then (i32.load8_u (i32.const 20)))
        (else (i32.const 65535))))
    (func (export "net") (result i32) (call $inet)))
  (core module $mem (memory (export "mem") 1))
  (core instance $mi (instantiate $mem))
  (alias core export $mi "mem" (core memory $memory))
  (core func $create (canon lower (func $tcs "create-tcp-socket") (memory $memory)))
  (core func $inet (canon lower (func $inet "instance-network")))
  (core instance $i (instantiate $m
    (with "h" (instance (export "create" (func $create))
      (export "inet" (func $inet)) (export "mem" (memory $memory))))))
  (func (export "tcp") (result u32) (canon lift (core func $i "tcp")))
  (func (export "net") (result u32) (canon lift (core func $i "net")))
)
