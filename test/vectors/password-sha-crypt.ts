/**
 * SHA-crypt vectors. Sources:
 *  - DREPPER: every test vector of Ulrich Drepper's specification, "Unix crypt using SHA-256 and
 *    SHA-512" (akkadia.org/drepper/SHA-crypt.txt), as the hash crypt(3) returns: salts longer than
 *    16 characters are cut to 16, and rounds=10 is raised to the minimum, 1000.
 *  - JTR: John the Ripper 1.7.9 vectors as quoted in passlib's test_handlers.py.
 *  - HC: hashcat example hashes, modes 7400 and 1800 (password "hashcat").
 */
import type { PasswordVector } from './password-types.js'

const DREPPER = 'Drepper, SHA-crypt.txt test vectors'
const JTR = 'John the Ripper 1.7.9 (via passlib test_handlers.py)'
const LONG = 'a very much longer text to encrypt.  This one even stretches over more' + 'than one line.'

export const sha256CryptVectors: PasswordVector[] = [
  { hash: '$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5', input: 'Hello world!', algorithm: 'sha256-crypt', source: DREPPER },
  { hash: '$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA', input: 'Hello world!', algorithm: 'sha256-crypt', source: DREPPER },
  { hash: '$5$rounds=5000$toolongsaltstrin$Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5', input: 'This is just a test', algorithm: 'sha256-crypt', source: DREPPER },
  { hash: '$5$rounds=1400$anotherlongsalts$Rx.j8H.h8HjEDGomFU8bDkXm3XIUnzyxf12oP84Bnq1', input: LONG, algorithm: 'sha256-crypt', source: DREPPER },
  { hash: '$5$rounds=77777$short$JiO1O3ZpDAxGJeaDIuqCoEFysAe1mZNJRs3pw0KQRd/', input: 'we have a short salt string but not a short password', algorithm: 'sha256-crypt', source: DREPPER },
  { hash: '$5$rounds=123456$asaltof16chars..$gP3VQ/6X7UUEW3HkBn2w1/Ptq2jxPyzV/cZKmF/wJvD', input: 'a short string', algorithm: 'sha256-crypt', source: DREPPER },
  { hash: '$5$rounds=1000$roundstoolow$yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC', input: 'the minimum number is still observed', algorithm: 'sha256-crypt', source: DREPPER },
  { hash: '$5$LKO/Ute40T3FNF95$U0prpBQd4PloSGU0pnpM4z9wKn4vZ1.jsrzQfPqxph9', input: 'U*U*U*U*', algorithm: 'sha256-crypt', source: JTR },
  { hash: '$5$kc7lRD1fpYg0g.IP$d7CMTcEqJyTXyeq8hTdu/jB/I6DGkoo62NXbHIR7S43', input: '', algorithm: 'sha256-crypt', source: JTR },
  { hash: '$5$7777657035274252$XftMj84MW.New1/ViLY5V4CM4Y7EBvfETaZsCW9vcJ8', input: 'hashcat', algorithm: 'sha256-crypt', source: 'hashcat example hashes, mode 7400' },
]

export const sha512CryptVectors: PasswordVector[] = [
  { hash: '$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1', input: 'Hello world!', algorithm: 'sha512-crypt', source: DREPPER },
  { hash: '$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.', input: 'Hello world!', algorithm: 'sha512-crypt', source: DREPPER },
  { hash: '$6$rounds=5000$toolongsaltstrin$lQ8jolhgVRVhY4b5pZKaysCLi0QBxGoNeKQzQ3glMhwllF7oGDZxUhx1yxdYcz/e1JSbq3y6JMxxl8audkUEm0', input: 'This is just a test', algorithm: 'sha512-crypt', source: DREPPER },
  { hash: '$6$rounds=1400$anotherlongsalts$POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1', input: LONG, algorithm: 'sha512-crypt', source: DREPPER },
  { hash: '$6$rounds=77777$short$WuQyW2YR.hBNpjjRhpYD/ifIw05xdfeEyQoMxIXbkvr0gge1a1x3yRULJ5CCaUeOxFmtlcGZelFl5CxtgfiAc0', input: 'we have a short salt string but not a short password', algorithm: 'sha512-crypt', source: DREPPER },
  { hash: '$6$rounds=123456$asaltof16chars..$BtCwjqMJGx5hrJhZywWvt0RLE8uZ4oPwcelCjmw2kSYu.Ec6ycULevoBK25fs2xXgMNrCzIMVcgEJAstJeonj1', input: 'a short string', algorithm: 'sha512-crypt', source: DREPPER },
  { hash: '$6$rounds=1000$roundstoolow$kUMsbe306n21p9R.FRkW3IGn.S9NPN0x50YhH1xhLsPuWGsUSklZt58jaTfF4ZEQpyUNGc0dqbpBYYBaHHrsX.', input: 'the minimum number is still observed', algorithm: 'sha512-crypt', source: DREPPER },
  { hash: '$6$LKO/Ute40T3FNF95$6S/6T2YuOIHY0N3XpLKABJ3soYcXD9mB7uVbtEZDj/LNscVhZoZ9DEH.sBciDrMsHOWOoASbNLTypH/5X26gN0', input: 'U*U*U*U*', algorithm: 'sha512-crypt', source: JTR },
  { hash: '$6$ojWH1AiTee9x1peC$QVEnTvRVlPRhcLQCk/HnHaZmlGAAjCfrAN0FtOsOnUk5K5Bn/9eLHHiRzrTzaIKjW9NTLNIBUCtNVOowWS2mN.', input: '', algorithm: 'sha512-crypt', source: JTR },
  { hash: '$6$72820166$U4DVzpcYxgw7MVVDGGvB2/H5lRistD5.Ah4upwENR5UtffLR4X4SxSzfREv8z6wVl0jRFX40/KnYVvK4829kD1', input: 'hashcat', algorithm: 'sha512-crypt', source: 'hashcat example hashes, mode 1800' },
]
