/**
 * S3's ETag and additional checksums of a file, computed in Python from its parts as AWS documents
 * them ("Checking object integrity in Amazon S3"): the digest of each part, then the digest of
 * those digests one after another and `-N`; a single PUT below the threshold is the digest of the
 * whole. hashlib for MD5 and the SHAs, zlib for CRC-32, and crcmod configured for CRC-64/NVME and
 * CRC-32C (the script checks their check values first), so nothing here shares code with hashd.
 * Callers skip with `skipUnless('python3', 'crcmod')`.
 */
import { python } from './tools.js'

const AWS_ALGORITHM = `
import base64, hashlib, json, sys, zlib, crcmod
path, part_size, threshold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
crc64nvme = crcmod.mkCrcFun(0x1AD93D23594C93659, initCrc=0, rev=True, xorOut=0xFFFFFFFFFFFFFFFF)
crc32c = crcmod.mkCrcFun(0x11EDC6F41, initCrc=0, rev=True, xorOut=0xFFFFFFFF)
assert crc64nvme(b'123456789') == 0xae8b14860a799888
assert crc32c(b'123456789') == 0xe3069283
digests = {
  'md5': lambda b: hashlib.md5(b).digest(),
  'sha1': lambda b: hashlib.sha1(b).digest(),
  'sha256': lambda b: hashlib.sha256(b).digest(),
  'crc32': lambda b: zlib.crc32(b).to_bytes(4, 'big'),
  'crc32c': lambda b: crc32c(b).to_bytes(4, 'big'),
  'crc64nvme': lambda b: crc64nvme(b).to_bytes(8, 'big'),
}
data = open(path, 'rb').read()
parts = [data[i:i + part_size] for i in range(0, len(data), part_size)] or [b'']
out = {}
for name, digest in digests.items():
  whole = digest(data)
  multipart = len(data) >= threshold
  combined = digest(b''.join(digest(part) for part in parts)) if multipart else whole
  suffix = '-%d' % len(parts) if multipart else ''
  out[name] = {
    'full': base64.b64encode(whole).decode(), 'composite': base64.b64encode(combined).decode() + suffix,
    'etag': combined.hex() + suffix, 'md5': whole.hex(),
  }
print(json.dumps(out))
`

/** One digest's results: the whole object's (base64), the composite (base64, `-N`), the ETag form (hex, `-N`) and the whole's hex. */
export interface AwsResult { full: string, composite: string, etag: string, md5: string }

export type AwsDigest = 'md5' | 'sha1' | 'sha256' | 'crc32' | 'crc32c' | 'crc64nvme'

/** Every digest's results for the file at `path`, in parts of `partSize` from `threshold` bytes on. */
export function awsChecksums(path: string, partSize: number, threshold: number): Record<AwsDigest, AwsResult> {
  return JSON.parse(python(AWS_ALGORITHM, [path, String(partSize), String(threshold)])) as Record<AwsDigest, AwsResult>
}
