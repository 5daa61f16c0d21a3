/**
 * A potfile line never sends its plaintext back. With `potfile: true` (or a `$HEX[…]` plaintext)
 * the plaintext is dropped before anything is read; without it, the line is read as it stands,
 * where `hash:plain` is also `hash:salt` (md5($pass.$salt), MyBB…) or `hash:user` (Oracle, Cisco
 * ASA), and whatever a reading takes from the text after the last colon is left out of `params`
 * and named in `withheld`. The corpus is every format's example from GET /api/identify/formats
 * (about 500 syntaxes) with a plaintext appended, sent as one pasted file and line by line.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'

/** Plaintexts as hashcat writes them after the last colon: printable, no colon (it hexifies those). */
const PLAINTEXTS = ['Tr0ub4dor&3', 'hunter2hunter2', '123456789', 'P@ss word!', 'пароль2024', 'x', '00000000000000000000000000000000']

let server: TestServer
let examples: string[]

before(async () => {
  server = await startServer({ LOG_LEVEL: 'warn' })
  const catalog = await server.get('/api/identify/formats')
  examples = (catalog.body.formats as Array<{ example: string | null }>).flatMap(({ example }) => example === null || /[\r\n]/.test(example) ? [] : [example])
  assert.ok(examples.length >= 450, `${examples.length} examples`)
})
after(async () => { await server?.close() })

/** Every string and number in a JSON value that is, or (for strings) contains, `plain`. */
function echoes(value: unknown, plain: string, path = ''): string[] {
  if (typeof value === 'string') return plain.length >= 6 ? (value.includes(plain) ? [path] : []) : (value === plain ? [path] : [])
  if (typeof value === 'number') return String(value) === plain ? [path] : []
  if (Array.isArray(value)) return value.flatMap((item, index) => echoes(item, plain, `${path}[${index}]`))
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => echoes(item, plain, `${path}.${key}`))
  return []
}

describe('a potfile line never sends its plaintext back', () => {
  it('the MD5 potfile line is read as itself, md5($pass.$salt) and MyBB among others, with the salt withheld', async () => {
    const answer = await server.post('/api/identify', { hash: '5f4dcc3b5aa765d61d8327deb882cf99:password' })
    assert.equal(answer.status, 200)
    const salted = (answer.body.matches as Array<{ algorithm: string, params?: Record<string, unknown>, withheld?: string[] }>)
      .filter((match) => match.withheld !== undefined)
    assert.ok(salted.some((match) => match.algorithm === 'mybb'), 'MyBB (md5(md5($salt).md5($pass))) is still a reading')
    for (const match of salted) {
      // hash:salt (md5($pass.$salt), MyBB…) or hash:user (mscash, Oracle H): either way, not sent.
      assert.equal(match.withheld?.length, 1, match.algorithm)
      assert.ok(['salt', 'user'].includes(match.withheld![0]!), `${match.algorithm}: ${match.withheld}`)
      assert.equal(match.params?.[match.withheld![0]!], undefined, match.algorithm)
    }
    assert.equal(answer.body.user, undefined, 'no user taken from the text after the colon')
    assert.doesNotMatch(answer.text, /"password"/)
    const asPotfile = await server.post('/api/identify', { hash: '5f4dcc3b5aa765d61d8327deb882cf99:password', potfile: true })
    assert.equal(asPotfile.body.matches[0].algorithm, 'md5')
    assert.deepEqual(asPotfile.body.normalized, ['potfile-plaintext'])
    assert.doesNotMatch(asPotfile.text, /password"/)
  })

  it('a salt is still returned where no plaintext can be: hash:salt read as a potfile, and salts inside a structured hash', async () => {
    // With potfile: true, the plaintext is gone first, and the salt of `md5:salt` is the hash's own.
    const salted = await server.post('/api/identify', { hash: '5f4dcc3b5aa765d61d8327deb882cf99:somesalt:hunter2', potfile: true })
    const withSalt = (salted.body.matches as Array<{ params?: Record<string, unknown> }>).find((match) => match.params?.salt === 'somesalt')
    assert.ok(withSalt, salted.text)
    const crypt = await server.post('/api/identify', { hash: '$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/' })
    assert.equal(crypt.body.matches[0].params.salt, 'saltsalt')
  })

  for (const potfile of [false, true]) {
    it(`every format's example with a plaintext after it, as a pasted file and line by line${potfile ? ', potfile: true' : ''}`, async () => {
      for (const plain of PLAINTEXTS) {
        const lines = examples.map((example) => `${example}:${plain}`)
        const pasted = await server.post('/api/identify', { hashes: [lines.join('\n')], potfile, top: 100 })
        assert.equal(pasted.status, 200, pasted.text.slice(0, 300))
        assert.deepEqual(echoes(pasted.body, plain), [], `plaintext ${plain} sent back in the pasted file's answer`)
        for (const line of lines.filter((_line, index) => index % 7 === PLAINTEXTS.indexOf(plain))) {
          const one = await server.post('/api/identify', { hash: line, potfile })
          assert.equal(one.status, 200, one.text)
          assert.deepEqual(echoes(one.body, plain), [], `${line}: plaintext sent back`)
        }
      }
    })
  }
})
