"""
Checks what a running govctl service's transparency log serves, independently of the product:
reuses test/core/ledger_reference.py (RFC 9162 and C2SP, written from the texts) and Python's own
JSON. One JSON request on stdin, one JSON answer on stdout.

request: {"vkey": str, "note": str, "entries": [entry text, ...] (every leaf, in order),
          "records": {id: body text of GET by id}, "inclusion": [{"leaf_index", "tree_size", "hashes"}],
          "consistency": [{"from", "to", "hashes"}], "tiles": {path: base64 bytes}}
"notes": [str, ...] instead of "note" checks several checkpoints of the same log in one run (one
interpreter start, the entries' tree built once): the answer's "notes" holds each one's
key_id_ok, signature_ok, origin, size and root_ok, in order.
"""
import base64
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'core'))
import ledger_reference as ref  # noqa: E402


def main():
    request = json.load(sys.stdin)
    entries = [e.encode('utf-8') for e in request['entries']]
    leaves = [ref.sha256(b'\x00' + e) for e in entries]
    tree = ref.Tree(lambda i: leaves[i])
    name, kid_hex, key = request['vkey'].split('+', 2)
    raw = base64.b64decode(key)
    assert raw[0] == 1
    public = raw[1:]

    def check_note(note):
        checked = {'key_id_ok': ref.key_id(name, 1, public).hex() == kid_hex, 'signature_ok': ref.verify_note(note, name, public, 1)}
        text, _ = ref.split_note(note)
        lines = text.split('\n')
        checked['origin'] = lines[0]
        size = int(lines[1])
        checked['size'] = size
        checked['root_ok'] = base64.b64decode(lines[2]) == tree.mth(0, size)
        return checked

    out = {}
    if 'notes' in request:
        out['notes'] = [check_note(note) for note in request['notes']]
    else:
        out.update(check_note(request['note']))
    out['inclusion_ok'] = [
        [base64.b64decode(h) for h in p['hashes']] == tree.path(p['leaf_index'], 0, p['tree_size']) for p in request['inclusion']
    ]
    out['consistency_ok'] = [
        [base64.b64decode(h) for h in p['hashes']] == (tree.proof(p['from'], p['to']) if 0 < p['from'] < p['to'] else []) for p in request['consistency']
    ]
    # Each entry's sha256 is the SHA-256 of Python's canonical JSON of the record as served by id.
    by_id = {}
    for e in request['entries']:
        value = json.loads(e)
        by_id[value['id']] = value
    out['records_ok'] = {
        rid: by_id[rid]['sha256'] == hashlib.sha256(ref.canonical(json.loads(body)).encode('utf-8')).hexdigest()
        for rid, body in request['records'].items()
    }
    # Tiles: level-0 hash tiles are the leaf hashes, entry bundles uint16-length-prefixed entries.
    tiles_ok = {}
    for path, data in request.get('tiles', {}).items():
        data = base64.b64decode(data)
        parts = path.split('/')
        width = int(parts[-1]) if '.p' in path else 256
        index = int(''.join(p.replace('x', '').replace('.p', '') for p in parts[2:(-1 if '.p' in path else None)]))
        start = index * 256
        if parts[1] == 'entries':
            expect = b''.join(len(e).to_bytes(2, 'big') + e for e in entries[start:start + width])
        else:
            level = int(parts[1])
            span = 256 ** level
            expect = b''.join(tree.mth((start + i) * span, (start + i + 1) * span) for i in range(width))
        tiles_ok[path] = expect == data
    out['tiles_ok'] = tiles_ok
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    main()
