/**
 * An independent implementation of hashd's `$pepper$v=1` format (docs/passwords.md), in Debian's
 * Python: HKDF-SHA-256 written out from RFC 5869 over the standard library's hmac, AES-256-GCM from
 * pycryptodome, and the inner hashes made and checked by passlib, argon2-cffi and python3-bcrypt.
 * Tests use it to check what hashd seals and to make peppered hashes hashd never saw.
 */
import { python } from './tools.js'

const PY_PEPPER = String.raw`
import sys, json, hmac, hashlib, base64, os
from Cryptodome.Cipher import AES

def hkdf(secret):
    # RFC 5869 §2.2-2.3: no salt is HashLen zero bytes; one block of output (L = 32).
    prk = hmac.new(b'\0' * 32, secret, hashlib.sha256).digest()
    return hmac.new(prk, b'hashd pepper v1 AES-256-GCM' + b'\x01', hashlib.sha256).digest()

def b64(data): return base64.b64encode(data).decode().rstrip('=')
def unb64(text): return base64.b64decode(text + '=' * (-len(text) % 4))

def seal(secret, key_id, scheme, inner):
    header = '$pepper$v=1,k=%s,s=%s$' % (key_id, scheme)
    nonce = os.urandom(12)
    cipher = AES.new(hkdf(base64.b64decode(secret)), AES.MODE_GCM, nonce=nonce, mac_len=16)
    cipher.update(header.encode())
    ct, tag = cipher.encrypt_and_digest(inner.encode())
    return header + b64(nonce) + '$' + b64(ct + tag)

def unseal(secret, text):
    cut = text.index('$', len('$pepper$')) + 1
    header, rest = text[:cut], text[cut:]
    nonce, sealed = (unb64(part) for part in rest.split('$'))
    cipher = AES.new(hkdf(base64.b64decode(secret)), AES.MODE_GCM, nonce=nonce, mac_len=16)
    cipher.update(header.encode())
    return cipher.decrypt_and_verify(sealed[:-16], sealed[-16:]).decode()

def make(scheme, pw, settings):
    if scheme == 'argon2id':
        from argon2 import PasswordHasher
        return PasswordHasher(**settings).hash(pw)
    if scheme == 'bcrypt':
        import bcrypt
        return bcrypt.hashpw(pw, bcrypt.gensalt(settings.get('rounds', 4))).decode()
    from passlib import hash as ph
    return getattr(ph, scheme.replace('-', '_')).using(**settings).hash(pw)

def check(scheme, pw, inner):
    if scheme == 'argon2id':
        from argon2 import PasswordHasher
        try: return PasswordHasher().verify(inner, pw)
        except Exception: return False
    if scheme == 'bcrypt':
        import bcrypt
        return bcrypt.checkpw(pw, inner.encode())
    from passlib import hash as ph
    return getattr(ph, scheme.replace('-', '_')).verify(pw, inner)

def run(job):
    op = job['op']
    pw = job.get('pw', '').encode()
    if op == 'seal':
        inner = job.get('inner') or make(job['scheme'], pw, job.get('settings', {}))
        return seal(job['secret'], job['keyId'], job['scheme'], inner)
    if op == 'unseal':
        return unseal(job['secret'], job['hash'])
    if op == 'check':
        inner = unseal(job['secret'], job['hash'])
        return {'inner': inner, 'match': check(job['scheme'], pw, inner)}
    if op == 'verify':
        return check(job['scheme'], pw, job['hash'])
    if op == 'make':
        return make(job['scheme'], pw, job.get('settings', {}))
    raise ValueError(op)

print(json.dumps([run(job) for job in json.load(sys.stdin)]))
`

export type PepperJob =
  | { op: 'seal', secret: string, keyId: string, scheme: string, pw?: string, inner?: string, settings?: Record<string, unknown> }
  | { op: 'unseal', secret: string, hash: string }
  | { op: 'check', secret: string, hash: string, scheme: string, pw: string }
  | { op: 'make', scheme: string, pw: string, settings?: Record<string, unknown> }
  | { op: 'verify', scheme: string, pw: string, hash: string }

/** Runs the jobs in one Python process; results in order. */
export function pythonPepper<T = unknown>(jobs: PepperJob[]): T[] {
  return JSON.parse(python(PY_PEPPER, [], JSON.stringify(jobs))) as T[]
}

/** Opens a `$pepper$` string with `secret` and checks the inner hash with the scheme's Python tool. */
export function pythonCheck(secret: string, hash: string, scheme: string, pw: string): { inner: string, match: boolean } {
  return pythonPepper<{ inner: string, match: boolean }>([{ op: 'check', secret, hash, scheme, pw }])[0] as { inner: string, match: boolean }
}
