"""An independent judge of a checkpoint note, written from C2SP signed-note and tlog-checkpoint
(sharing no code with govctl): request {"vkey": verifier key, "note": text}, answer
{"accepted": bool, "why": str}. A signature counts when its key name and key id both match the
verifier key; such a signature must verify; at least one must; other lines are ignored; the
checkpoint's origin line must be the key name."""
import base64, binascii, hashlib, json, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature


def judge(vkey, note):
    name, key_id, key = vkey.split("+", 2)
    raw = base64.b64decode(key, validate=True)
    if raw[0] != 1 or len(raw) != 33:
        return False, "not an Ed25519 verifier key"
    public = raw[1:]
    if hashlib.sha256(name.encode() + b"\n\x01" + public).digest()[:4].hex() != key_id:
        return False, "key id"
    if any(ord(c) < 0x20 and c != "\n" for c in note):
        return False, "control character"
    split = note.rfind("\n\n")
    if split < 0:
        return False, "no blank line"
    text, block = note[: split + 1], note[split + 2 :]
    if not block.endswith("\n"):
        return False, "signature block not newline-terminated"
    verified = False
    for line in block[:-1].split("\n"):
        if not line.startswith("\u2014 "):
            return False, "signature line without em dash"
        parts = line[2:].split(" ")
        if len(parts) != 2 or not parts[0] or "+" in parts[0]:
            return False, "malformed signature line"
        try:
            sig = base64.b64decode(parts[1], validate=True)
        except (binascii.Error, ValueError):
            return False, "signature not base64"
        if base64.b64encode(sig).decode() != parts[1] or len(sig) < 5:
            return False, "signature not canonical base64"
        if parts[0] != name or sig[:4].hex() != key_id:
            continue  # another key: ignored
        try:
            Ed25519PublicKey.from_public_bytes(public).verify(sig[4:], text.encode())
        except InvalidSignature:
            return False, "a known key's signature does not verify"
        verified = True
    if not verified:
        return False, "no signature by the key"
    if text.split("\n")[0] != name:
        return False, "origin is not the key name"
    return True, "ok"


request = json.load(sys.stdin)
accepted, why = judge(request["vkey"], request["note"])
json.dump({"accepted": accepted, "why": why}, sys.stdout)
