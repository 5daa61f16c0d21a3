/**
 * Python's `hmac` (Debian's /usr/bin/python3, standard library) as the independent peer for every
 * HMAC the key ring's tests make or check: it computes HMACs under secrets the test wrote into
 * HMAC_KEYS_FILE, and checks HMACs hashd made, many at once in one process. Call only from tests
 * skipped without python3 (`skipUnless('python3')`).
 */
import { python } from './tools.js'

const PY_HMAC = String.raw`
import sys, json, hmac, hashlib, base64
NAMES = {'sha256': 'sha256', 'sha512': 'sha512', 'sha384': 'sha384', 'sha224': 'sha224', 'sha3-256': 'sha3_256', 'sha512-256': 'sha512_256', 'blake2b-512': 'blake2b', 'sha1': 'sha1', 'md5': 'md5'}
def raw(job):
    key = base64.b64decode(job['secret'])
    message = base64.b64decode(job['messageBase64']) if 'messageBase64' in job else job['message'].encode()
    return hmac.new(key, message, getattr(hashlib, NAMES[job.get('algorithm', 'sha256')])).digest()
def run(job):
    mac = raw(job)
    if job['op'] == 'make':
        return {'hex': mac.hex(), 'base64': base64.b64encode(mac).decode(), 'base64url': base64.urlsafe_b64encode(mac).decode().rstrip('=')}
    given = job['hmac']
    if given.startswith('hashd:v'):
        given = base64.b64decode(given.split(':', 2)[2], validate=True)
    else:
        given = bytes.fromhex(given) if job.get('encoding', 'hex') == 'hex' else base64.b64decode(given + '=' * (-len(given) % 4), altchars=b'-_' if job.get('encoding') == 'base64url' else None)
    return hmac.compare_digest(mac, given)
print(json.dumps([run(job) for job in json.load(sys.stdin)]))
`

export interface PyMade { hex: string, base64: string, base64url: string }
export type HmacJob =
  | { op: 'make', secret: string, message: string, algorithm?: string }
  | { op: 'check', secret: string, message: string, hmac: string, algorithm?: string, encoding?: 'hex' | 'base64' | 'base64url' }
  /** With `messageBase64`, the message's bytes are those (binary messages); `message` is then ignored. */
  | { op: 'check', secret: string, message?: undefined, messageBase64: string, hmac: string, algorithm?: string, encoding?: 'hex' | 'base64' | 'base64url' }

/** Runs the jobs in one Python process; results in order (`make`: the HMAC in three encodings; `check`: true or false). */
export function pythonHmac<T = PyMade | boolean>(jobs: HmacJob[]): T[] {
  return JSON.parse(python(PY_HMAC, [], JSON.stringify(jobs))) as T[]
}
