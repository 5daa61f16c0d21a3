/**
 * Pepper keys in a PKCS#11 token (SoftHSM2): AES-256-GCM done by the token, in the stored format of
 * a file key. An AES key of known value (put in by PyKCS11) lets pycryptodome check both ways: what
 * hashd seals with the token key opens in Python with that key (and argon2-cffi verifies the hash
 * inside), and what Python seals hashd verifies. A hash sealed under a file key is rewrapped to the
 * token key and verifies; after the ring rotates to a key made with `pkcs11-tool --keygen`, it is
 * rewrapped again and still verifies. A changed string does not open (422), and the token stays up.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { pythonCheck, pythonPepper } from './helpers/pepper.js'
import { makeSoftToken, SOFTHSM_MODULE, type SoftToken } from './helpers/softhsm.js'
import { python, skipUnless } from './helpers/tools.js'

/** `$pepper$v=1` with the AES key itself (a token key has no HKDF step): open or seal, in pycryptodome. */
const PY_RAW_GCM = String.raw`
import sys, base64, os
from Cryptodome.Cipher import AES
key = bytes.fromhex(sys.argv[2])
def unb64(text): return base64.b64decode(text + '=' * (-len(text) % 4))
def b64(data): return base64.b64encode(data).decode().rstrip('=')
if sys.argv[1] == 'open':
    text = sys.argv[3]
    cut = text.index('$', len('$pepper$')) + 1
    header, rest = text[:cut], text[cut:]
    nonce, sealed = (unb64(part) for part in rest.split('$'))
    cipher = AES.new(key, AES.MODE_GCM, nonce=nonce, mac_len=16)
    cipher.update(header.encode())
    print(cipher.decrypt_and_verify(sealed[:-16], sealed[-16:]).decode())
else:
    header = '$pepper$v=1,k=%s,s=argon2id$' % sys.argv[3]
    nonce = os.urandom(12)
    cipher = AES.new(key, AES.MODE_GCM, nonce=nonce, mac_len=16)
    cipher.update(header.encode())
    ct, tag = cipher.encrypt_and_digest(sys.argv[4].encode())
    print(header + b64(nonce) + '$' + b64(ct + tag))
`
const PY_ARGON2 = 'import sys\nfrom argon2 import PasswordHasher\nprint(PasswordHasher(memory_cost=19456, time_cost=2, parallelism=1).hash(sys.argv[1]) if sys.argv[2] == "make" else PasswordHasher().verify(sys.argv[3], sys.argv[1]))'
const ARGON2 = { algorithm: 'argon2id', options: { memoryCost: 19456, timeCost: 2, parallelism: 1 } }

describe('pepper keys in a PKCS#11 token', { skip: skipUnless('softhsm2', 'pkcs11-tool', 'pykcs11', 'python3', 'pycryptodome', 'argon2-cffi') }, () => {
  let token: SoftToken
  let hashd: HashdProcess
  let keys: string
  const aes = randomBytes(32)
  const k1 = randomBytes(32).toString('base64')
  const password = 'correct horse battery staple'

  before(async () => {
    token = makeSoftToken()
    process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
    token.importKey('pepper-k2', aes, 'aes')
    token.keygen('pepper-k3', 'AES:32')
    keys = join(token.dir, 'pepper-keys')
    writeFileSync(keys, `k1 ${k1}\nk2 pkcs11:token=hashd;object=pepper-k2\nk3 pkcs11:token=hashd;object=pepper-k3 state=staged\n`)
    hashd = await startHashd({ ...token.env, PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_PIN_FILE: token.pinFile, PEPPER_KEYS_FILE: keys })
  })
  after(async () => {
    await hashd?.stop()
    token?.remove()
    delete process.env.SOFTHSM2_CONF
  })

  it('hashd seals with the token key; pycryptodome opens it with the key\'s value and argon2-cffi verifies the inside; and the other way', async () => {
    const made = await hashd.post('/api/hash', { input: password, ...ARGON2 })
    assert.equal(made.status, 200, made.text)
    assert.equal(made.body.pepperKey, 'k2')
    const inner = python(PY_RAW_GCM, ['open', aes.toString('hex'), made.body.hash as string])
    assert.match(inner, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    assert.equal(python(PY_ARGON2, [password, 'verify', inner]), 'True')
    const verified = await hashd.post('/api/verify', { input: password, hash: made.body.hash })
    assert.deepEqual([verified.body.match, verified.body.pepperKey], [true, 'k2'])
    assert.equal((await hashd.post('/api/verify', { input: 'wrong', hash: made.body.hash })).body.match, false)

    const sealedByPython = python(PY_RAW_GCM, ['seal', aes.toString('hex'), 'k2', python(PY_ARGON2, [password, 'make'])])
    const theirs = await hashd.post('/api/verify', { input: password, hash: sealedByPython })
    assert.deepEqual([theirs.status, theirs.body.match], [200, true], theirs.text)
  })

  it('a file key\'s hash is rewrapped to the token key; after a rotation to a key made in the token, again; each verifies', async () => {
    const underK1 = python(PY_RAW_GCM, ['open', aes.toString('hex'), (await hashd.post('/api/hash', { input: password, ...ARGON2 })).body.hash as string])
    // A hash under the file key k1, sealed by Python's independent implementation of the file-key format.
    const [sealedK1] = pythonPepper<string>([{ op: 'seal', secret: k1, keyId: 'k1', scheme: 'argon2id', inner: underK1 }])
    assert.equal(pythonCheck(k1, sealedK1!, 'argon2id', password).match, true)
    const moved = await hashd.post('/api/pepper/rewrap', { hash: sealedK1 })
    assert.equal(moved.status, 200, moved.text)
    assert.deepEqual([moved.body.previousPepperKey, moved.body.pepperKey, moved.body.changed], ['k1', 'k2', true])
    assert.equal(python(PY_RAW_GCM, ['open', aes.toString('hex'), moved.body.hash as string]), underK1)
    assert.equal((await hashd.post('/api/verify', { input: password, hash: moved.body.hash })).body.match, true)

    // Rotate: k3 (made inside the token, value unknown) becomes current; k2 hashes still verify and move to k3.
    writeFileSync(keys, `k1 ${k1}\nk2 pkcs11:token=hashd;object=pepper-k2\nk3 pkcs11:token=hashd;object=pepper-k3\n`)
    const mark = hashd.lines()
    hashd.child.kill('SIGHUP')
    await hashd.logged(/pepper keys reloaded/, mark)
    const old = await hashd.post('/api/verify', { input: password, hash: moved.body.hash })
    assert.deepEqual([old.body.match, old.body.rehashRecommended], [true, true])
    const again = await hashd.post('/api/pepper/rewrap', { hash: moved.body.hash })
    assert.deepEqual([again.body.previousPepperKey, again.body.pepperKey], ['k2', 'k3'])
    assert.match(again.body.hash as string, /^\$pepper\$v=1,k=k3,s=argon2id\$/)
    const current = await hashd.post('/api/verify', { input: password, hash: again.body.hash })
    assert.deepEqual([current.body.match, current.body.rehashRecommended, current.body.pepperKey], [true, false, 'k3'])
  })

  it('a changed string does not open under the token key (422), and the token stays available', async () => {
    const made = (await hashd.post('/api/hash', { input: password, ...ARGON2 })).body.hash as string
    // A character inside the sealed part: the last one may only carry base64's unused padding bits.
    const at = made.length - 8
    const changed = await hashd.post('/api/verify', { input: password, hash: `${made.slice(0, at)}${made[at] === 'A' ? 'B' : 'A'}${made.slice(at + 1)}` })
    assert.equal(changed.status, 422, changed.text)
    assert.equal(changed.body.type, 'urn:hashd:problem:pepper-key-mismatch')
    const health = await hashd.get('/api/health')
    assert.deepEqual([health.body.keySource, health.body.degraded], ['hsm', false])
    assert.equal((await hashd.post('/api/verify', { input: password, hash: made })).body.match, true)
  })
})
