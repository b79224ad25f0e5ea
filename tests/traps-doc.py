#!/usr/bin/env python3
"""traps-doc.py - every trap message of runtime/ is in docs/traps.md.

Reads the C sources of runtime/run, runtime/cabi, runtime/value and
runtime/wasm/trap.c, takes the string literals passed to the functions
that raise a trap (trap_msg, trapf, cm_host_call_trap, cabi_fail with
CABI_ERR_TRAP, ...) and the CM_MSG_* / CABI_MSG_* macros, and checks
that each message is in docs/traps.md.  Adjacent literals are one
message (C concatenation); literals apart (a ?: choice) are several.
Output is TAP-like; the last line is "N passed, N failed".

Usage: traps-doc.py SRCDIR
"""
import glob
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else '.'
doc = open(src + '/docs/traps.md').read()

macros = {}
for f in glob.glob(src + '/runtime/*/*.h'):
    text = open(f).read()
    for m in re.finditer(r'#define\s+(C[MA][A-Z_]*MSG_[A-Z_0-9]+)\s+((?:\\\s*)?(?:"[^"]*"\s*)+)', text):
        macros[m.group(1)] = ''.join(re.findall(r'"([^"]*)"', m.group(2)))

CALLS = re.compile(r'\b(?:trap_msg|trapf|cm_host_call_trap|cabi_trap|cabi_fail|'
                   r'set_trap|fail_trap|trap)\s*\(')
TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|(C[MA][A-Z_]*MSG_[A-Z_0-9]+)|(\s+)|(.)', re.S)


def call_args(s, i):
    depth, j = 1, i
    while j < len(s) and depth:
        c = s[j]
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
        elif c == '"':
            j += 1
            while j < len(s) and s[j] != '"':
                j += 2 if s[j] == '\\' else 1
        j += 1
    return s[i:j - 1]


def messages(args):
    out, cur = [], None
    for lit, mac, ws, other in TOKEN.findall(args):
        if lit or mac:
            piece = lit if lit else macros.get(mac, '')
            cur = (cur or '') + piece
        elif ws:
            continue
        else:
            if cur is not None:
                out.append(cur)
            cur = None
    if cur is not None:
        out.append(cur)
    return out


found = {}
files = (glob.glob(src + '/runtime/run/*.c') + glob.glob(src + '/runtime/cabi/*.c')
         + glob.glob(src + '/runtime/value/*.c'))
for f in sorted(files):
    s = open(f).read()
    for m in CALLS.finditer(s):
        args = call_args(s, m.end())
        if m.group(0).startswith('cabi_fail') and 'CABI_ERR_TRAP' not in args:
            continue
        for msg in messages(args):
            msg = msg.replace('wasm trap: ', '').replace('\\"', '"')
            if len(msg.replace('%s', '').strip()) < 4 or msg in ('trap', 'out of memory'):
                continue
            found.setdefault(msg, f[len(src) + 1:])
trap_c = open(src + '/runtime/wasm/trap.c').read()
for msg in re.findall(r'return "([^"]+)";', trap_c):
    if msg not in ('no trap', 'unknown trap'):
        found.setdefault(msg, 'runtime/wasm/trap.c')
for name, msg in macros.items():
    found.setdefault(msg, 'a *_MSG_ macro (%s)' % name)

n = failed = 0
for msg, where in sorted(found.items()):
    n += 1
    if msg in doc:
        print('ok %d - %s' % (n, msg))
    else:
        failed += 1
        print('not ok %d - %s (%s) is not in docs/traps.md' % (n, msg, where))
print('1..%d' % n)
print('%d passed, %d failed' % (n - failed, failed))
sys.exit(1 if failed else 0)
