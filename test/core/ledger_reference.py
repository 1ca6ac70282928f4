#!/usr/bin/env python3
"""Independent reference for govctl's transparency-log formats, for the ledger tests.

Written from the specification texts only (RFC 9162 section 2.1; C2SP signed-note,
tlog-checkpoint, tlog-cosignature and tlog-tiles), sharing no code with src/core/ledger.
The recursions below are the RFC's definitions as written (MTH, PATH, PROOF/SUBPROOF), not the
product's iterative forms. Reads one JSON request on stdin, writes one JSON answer on stdout.
"""
import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

sys.setrecursionlimit(10000)


def sha256(data):
    return hashlib.sha256(data).digest()


def b64(data):
    return base64.b64encode(data).decode('ascii')


# ---------------------------------------------------------------------------------------------
# RFC 9162 section 2.1


def largest_power_of_two_below(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


class Tree:
    """D given by a function from leaf index to leaf hash; MTH memoised for ranges >= memo_min."""

    def __init__(self, leaf_hash_at, memo_min=1):
        self.leaf_hash_at = leaf_hash_at
        self.memo = {}
        self.memo_min = memo_min

    def mth(self, lo, hi):
        n = hi - lo
        if n == 0:
            return sha256(b'')
        if n == 1:
            return self.leaf_hash_at(lo)
        key = (lo, hi)
        if key in self.memo:
            return self.memo[key]
        k = largest_power_of_two_below(n)
        value = sha256(b'\x01' + self.mth(lo, lo + k) + self.mth(lo + k, hi))
        if n >= self.memo_min:
            self.memo[key] = value
        return value

    def path(self, m, lo, hi):
        """PATH(m, D[lo:hi]), m relative to lo."""
        n = hi - lo
        if n == 1:
            return []
        k = largest_power_of_two_below(n)
        if m < k:
            return self.path(m, lo, lo + k) + [self.mth(lo + k, hi)]
        return self.path(m - k, lo + k, hi) + [self.mth(lo, lo + k)]

    def subproof(self, m, lo, hi, b):
        """SUBPROOF(m, D[lo:hi], b), m relative to lo."""
        n = hi - lo
        if m == n:
            return [] if b else [self.mth(lo, hi)]
        k = largest_power_of_two_below(n)
        if m <= k:
            return self.subproof(m, lo, lo + k, b) + [self.mth(lo + k, hi)]
        return self.subproof(m - k, lo + k, hi, False) + [self.mth(lo, lo + k)]

    def proof(self, m, n):
        return self.subproof(m, 0, n, True)


def entry_leaf_tree(prefix, memo_min=1):
    return Tree(lambda i: sha256(b'\x00' + (prefix + str(i)).encode('ascii')), memo_min)


def merkle(request):
    tree = entry_leaf_tree(request['leaf_prefix'])
    out = {
        'roots': [tree.mth(0, n).hex() for n in range(0, request['max_size'] + 1)],
        'inclusion': [[h.hex() for h in tree.path(i, 0, n)] for i, n in request['inclusion']],
        'consistency': [[h.hex() for h in tree.proof(m, n)] for m, n in request['consistency']],
        'large': [],
    }
    for big in request['large']:
        t = entry_leaf_tree(big['leaf_prefix'], memo_min=256)
        n = big['size']
        out['large'].append({
            'root': t.mth(0, n).hex(),
            'inclusion': [[h.hex() for h in t.path(i, 0, n)] for i in big['inclusion']],
            'consistency': [{'root': t.mth(0, m).hex(), 'proof': [h.hex() for h in t.proof(m, n)]} for m in big['consistency']],
        })
    return out


# ---------------------------------------------------------------------------------------------
# C2SP tlog-tiles


def tile_index_path(n):
    digits = str(n)
    while len(digits) % 3:
        digits = '0' + digits
    groups = [digits[i:i + 3] for i in range(0, len(digits), 3)]
    return '/'.join(['x' + g for g in groups[:-1]] + [groups[-1]])


def tile_path(level, n, width):
    suffix = '' if width == 256 else '.p/%d' % width
    return 'tile/%s/%s%s' % (level, tile_index_path(n), suffix)


def tiles_for_size(s):
    """Per the spec: full tiles, and at level l the partial tile of floor(s / 256**l) mod 256."""
    tiles = []
    level = 0
    while s // 256 ** level > 0:
        full = s // 256 ** (level + 1)
        for n in range(full):
            tiles.append((level, n, 256))
        width = (s // 256 ** level) % 256
        if width:
            tiles.append((level, full, width))
        level += 1
    return tiles


def tiles(request):
    tree = entry_leaf_tree(request['leaf_prefix'], memo_min=2)
    out = {'index_paths': [tile_index_path(n) for n in request['indexes']], 'sizes': [], 'bundles': []}
    for s in request['sizes']:
        listing = []
        for level, n, width in tiles_for_size(s):
            span = 256 ** level
            hashes = [tree.mth((n * 256 + i) * span, (n * 256 + i + 1) * span) for i in range(width)]
            content = b''.join(hashes)
            listing.append({'path': tile_path(level, n, width), 'sha256': sha256(content).hex(), 'length': len(content)})
            if level == 0:
                entries = [(request['leaf_prefix'] + str(n * 256 + i)).encode('ascii') for i in range(width)]
                bundle = b''.join(len(e).to_bytes(2, 'big') + e for e in entries)
                listing.append({'path': tile_path('entries', n, width), 'sha256': sha256(bundle).hex(), 'length': len(bundle)})
        out['sizes'].append(listing)
    for entries in request['bundles']:
        raw = [bytes.fromhex(e) for e in entries]
        out['bundles'].append(b''.join(len(e).to_bytes(2, 'big') + e for e in raw).hex())
    return out


# ---------------------------------------------------------------------------------------------
# C2SP signed-note, tlog-checkpoint, tlog-cosignature


def raw_public(private_key):
    return private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(name, sig_type, public):
    return sha256(name.encode('utf-8') + b'\n' + bytes([sig_type]) + public)[:4]


def vkey(name, sig_type, public):
    return '%s+%s+%s' % (name, key_id(name, sig_type, public).hex(), b64(bytes([sig_type]) + public))


def signature_line(name, kid, signature):
    return '\u2014 %s %s\n' % (name, b64(kid + signature))


def sign_note(text, name, private_key):
    return text + '\n' + signature_line(name, key_id(name, 1, raw_public(private_key)), private_key.sign(text.encode('utf-8')))


def cosign_message(body, timestamp):
    return ('cosignature/v1\ntime %d\n' % timestamp).encode('ascii') + body.encode('utf-8')


def cosignature_line(body, name, private_key, timestamp):
    signature = timestamp.to_bytes(8, 'big') + private_key.sign(cosign_message(body, timestamp))
    return signature_line(name, key_id(name, 4, raw_public(private_key)), signature)


def checkpoint_body(origin, size, root, extensions):
    return ''.join(line + '\n' for line in [origin, str(size), b64(root)] + extensions)


def split_note(note):
    """Text up to and including the newline before the last blank line; the signature lines."""
    at = note.rindex('\n\n')
    text, block = note[:at + 1], note[at + 2:]
    assert block.endswith('\n')
    sigs = []
    for line in block[:-1].split('\n'):
        assert line.startswith('\u2014 ')
        name, encoded = line[2:].split(' ')
        raw = base64.b64decode(encoded, validate=True)
        sigs.append((name, raw[:4], raw[4:]))
    return text, sigs


def verify_note(note, name, public, sig_type):
    """True when a signature line by (name, key id) verifies over the note text (or the cosigned message)."""
    text, sigs = split_note(note)
    kid = key_id(name, sig_type, public)
    found = False
    for sig_name, sig_kid, signature in sigs:
        if sig_name != name or sig_kid != kid:
            continue
        key = Ed25519PublicKey.from_public_bytes(public)
        try:
            if sig_type == 1:
                key.verify(signature, text.encode('utf-8'))
            else:
                timestamp = int.from_bytes(signature[:8], 'big')
                key.verify(signature[8:], cosign_message(text, timestamp))
        except InvalidSignature:
            return False
        found = True
    return found


def notes(request):
    log_key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(request['log_seed']))
    witness_key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(request['witness_seed']))
    origin, witness = request['origin'], request['witness_name']
    log_public, witness_public = raw_public(log_key), raw_public(witness_key)
    out = {
        'log_key_id': key_id(origin, 1, log_public).hex(),
        'log_vkey': vkey(origin, 1, log_public),
        'log_skey': 'PRIVATE+KEY+%s+%s+%s' % (origin, key_id(origin, 1, log_public).hex(), b64(b'\x01' + bytes.fromhex(request['log_seed']))),
        'witness_vkey': vkey(witness, 4, witness_public),
        'checkpoints': [],
    }
    for cp in request['checkpoints']:
        body = checkpoint_body(origin, cp['size'], bytes.fromhex(cp['root']), cp['extensions'])
        note = sign_note(body, origin, log_key)
        out['checkpoints'].append({
            'body': body,
            'note': note,
            'cosigned': note + cosignature_line(body, witness, witness_key, cp['timestamp']),
        })
    # Notes the product produced, verified here: [log signature ok, witness cosignature ok].
    out['verified'] = [
        [verify_note(note, origin, log_public, 1), verify_note(note, witness, witness_public, 4)] for note in request['verify']
    ]
    # A key pair of Python's own making: the product must verify what it signs.
    fresh, fresh_witness = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    body = checkpoint_body(request['fresh_origin'], 7, sha256(b'fresh'), [])
    out['fresh'] = {
        'vkey': vkey(request['fresh_origin'], 1, raw_public(fresh)),
        'witness_vkey': vkey(witness, 4, raw_public(fresh_witness)),
        'note': sign_note(body, request['fresh_origin'], fresh) + cosignature_line(body, witness, fresh_witness, 1700000000),
    }
    return out


# ---------------------------------------------------------------------------------------------
# govctl's leaf entry: Python's canonical JSON, as docs/wire-format.md "Canonical JSON" defines it


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=True)


def entries(request):
    out = []
    for item in request:
        digest = hashlib.sha256(canonical(item['record']).encode('utf-8')).hexdigest()
        entry = canonical({'kind': item['kind'], 'id': item['record']['id'], 'workspace_id': item['workspace_id'], 'received_at': item['record']['received_at'], 'sha256': digest})
        out.append({'sha256': digest, 'entry': entry, 'leaf': sha256(b'\x00' + entry.encode('utf-8')).hex()})
    return out


def main():
    request = json.load(sys.stdin)
    handlers = {'merkle': merkle, 'tiles': tiles, 'notes': notes, 'entries': entries}
    json.dump({name: handlers[name](body) for name, body in request.items()}, sys.stdout)


if __name__ == '__main__':
    main()
