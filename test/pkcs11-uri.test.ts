/**
 * RFC 7512 PKCS#11 URIs as keys files write them (src/keys/pkcs11/uri.ts): the path attributes
 * hashd takes, percent-decoding (text and bytes), and every refusal, whose message quotes nothing
 * of the URI. Then the keys file: a `pkcs11:` third field is a token key, and without
 * PKCS11_MODULE it is refused with a message naming the variables.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseHmacKeysFile } from '../src/keys/hmac.js'
import { Pkcs11Token } from '../src/keys/pkcs11/token.js'
import { formatPkcs11Uri, parsePkcs11Uri, Pkcs11UriError } from '../src/keys/pkcs11/uri.js'

describe('PKCS#11 URIs (RFC 7512)', () => {
  it('reads token, object, serial, id and type, percent-decoded', () => {
    assert.deepEqual(parsePkcs11Uri('pkcs11:token=hashd;object=orders-v3'), { token: 'hashd', object: 'orders-v3', text: 'pkcs11:token=hashd;object=orders-v3' })
    const uri = parsePkcs11Uri('pkcs11:token=My%20Token;object=caf%C3%A9;id=%01%02%ff;type=secret-key;serial=9e0c')
    assert.equal(uri.token, 'My Token')
    assert.equal(uri.object, 'café')
    assert.deepEqual(uri.id, Buffer.from([1, 2, 255]))
    assert.equal(uri.serial, '9e0c')
    assert.equal(parsePkcs11Uri('PKCS11:id=%41').id?.toString(), 'A')
    assert.equal(parsePkcs11Uri('pkcs11:object=a=b&c').object, 'a=b&c')
    assert.equal(parsePkcs11Uri('pkcs11:object=x;type=secret').object, 'x')
    // RFC 7512 §2.3 pin-source, as a file: URI (RFC 8089: file:/path and file:///path), percent-decoded.
    assert.equal(parsePkcs11Uri('pkcs11:token=t;object=x?pin-source=file:/run/secrets/t-pin').pinSource, '/run/secrets/t-pin')
    assert.equal(parsePkcs11Uri('pkcs11:token=t;object=x?pin-source=file:///run/my%20pin').pinSource, '/run/my pin')
    assert.equal(parsePkcs11Uri('pkcs11:token=t;object=x').pinSource, undefined)
  })

  it('refuses what it does not take, quoting nothing of the URI', () => {
    const refusals: Array<[string, RegExp]> = [
      ['pkcs11:token=hashd', /names no key/],
      ['pkcs11:object=a;object=b', /given twice/],
      ['pkcs11:object=a?pin-value=SECRET1234', /PIN is never written/],
      ['pkcs11:object=a?pin-source=%7C/usr/bin/getpin', /file: URI of an absolute path/],
      ['pkcs11:object=a?pin-source=|/usr/bin/getpin', /file: URI of an absolute path/],
      ['pkcs11:object=a?pin-source=file:pin', /file: URI of an absolute path/],
      ['pkcs11:object=a?pin-source=file://host/pin', /file: URI of an absolute path/],
      ['pkcs11:object=a?pin-source=file:/run/../etc/pin', /no \.\./],
      ['pkcs11:object=a?pin-source=file:/a&pin-source=file:/b', /given twice/],
      ['pkcs11:object=a?pin-source', /pin-source=file:\/path/],
      ['pkcs11:object=a?', /no query attribute/],
      ['pkcs11:object=a?module-path=/x.so', /query attributes/],
      ['pkcs11:object=a;slot-id=1', /not taken/],
      ['pkcs11:object=a;type=private', /secret-key/],
      ['pkcs11:object=a%zz', /two hex digits/],
      ['pkcs11:object=a%4', /two hex digits/],
      ['pkcs11:object=a b', /percent-encoded/],
      ['pkcs11:object=a/b', /percent-encoded/],
      ['pkcs11:object=%ff', /not UTF-8/],
      ['pkcs11:object=', /empty/],
      ['pkcs11:object', /name=value/],
      ['pkcs11:id=', /empty/],
      [`pkcs11:object=${'a'.repeat(300)}`, /longer than/],
      [`pkcs11:token=${'t'.repeat(33)};object=a`, /longer than/],
      [`pkcs11:object=${'a'.repeat(2000)}`, /at most 1024/],
      ['file:object=a', /starts with pkcs11:/],
    ]
    for (const [uri, reason] of refusals) {
      assert.throws(() => parsePkcs11Uri(uri), (error: Error) => {
        assert.ok(error instanceof Pkcs11UriError, uri)
        assert.match(error.message, reason, uri)
        assert.ok(!error.message.includes('SECRET1234') && !error.message.includes('aaaa'), uri)
        return true
      })
    }
  })

  it('formats what keys:generate prints, which reads back the same', () => {
    const text = formatPkcs11Uri({ token: 'my token', object: 'orders;v=3' })
    assert.equal(text, 'pkcs11:token=my%20token;object=orders%3Bv%3D3;type=secret-key')
    assert.deepEqual({ ...parsePkcs11Uri(text), text: '' }, { token: 'my token', object: 'orders;v=3', text: '' })
  })
})

describe('a pkcs11: secret in HMAC_KEYS_FILE', () => {
  it('is a token key with PKCS11_MODULE; refused without it, or with a bad URI or an algorithm the token has no mechanism for', () => {
    const token = new Pkcs11Token({ modulePath: '/nonexistent.so', pinFile: '/nonexistent', sessions: 1, queueMax: 1 })
    const ring = parseHmacKeysFile('orders 3 pkcs11:token=hashd;object=orders-v3\n', 'keys', token)
    assert.equal(ring.get('orders')?.ring.current.material.inMemory, false)
    assert.equal(JSON.stringify(ring.get('orders')?.ring.current.material), '"[pkcs11]"')
    assert.throws(() => parseHmacKeysFile('orders 3 pkcs11:object=o\n', 'keys'), /line 1, field 3: .*needs PKCS11_MODULE and PKCS11_PIN_FILE/)
    assert.throws(() => parseHmacKeysFile('orders 3 pkcs11:object=o?pin-value=1234\n', 'keys', token), /field 3: not a PKCS#11 URI hashd takes .*PIN is never written/)
    assert.throws(() => parseHmacKeysFile('orders 3 pkcs11:object=o algorithms=sha256,sha3-256\n', 'keys', token), /algorithms= of sha256, sha384, sha512 only/)
    // A token has one PIN file: a second URI naming it with another pin-source is refused on its own line.
    const tokens = new Pkcs11Token({ modulePath: '/nonexistent.so', pinFile: '/nonexistent', sessions: 1, queueMax: 1 })
    const twoPins = 'a 1 pkcs11:token=t;object=a?pin-source=file:/run/t-pin\nb 1 pkcs11:token=t;object=b?pin-source=file:/run/other-pin\n'
    assert.throws(() => parseHmacKeysFile(twoPins, 'keys', tokens), /line 2, field 3: .*token=t .*one PIN file/)
    const sameToken = parseHmacKeysFile('a 1 pkcs11:token=t;object=a?pin-source=file:/run/t-pin\nb 1 pkcs11:token=t;object=b?pin-source=file:///run/t-pin\nc 1 pkcs11:token=u;object=c\n', 'keys', tokens)
    assert.deepEqual(sameToken.names, ['a', 'b', 'c'])
    assert.deepEqual(tokens.state.tokens.map((each) => each.token), ['token=t', 'token=u'])
  })
})
