/** MD2, MD4, MD5: the test suites of RFC 1319, RFC 1320 and RFC 1321, Appendix A.5 each. */
import { RFC13XX_SUITE, suite, type DigestVector } from './digests-types.js'

export const mdVectors: DigestVector[] = [
  ...suite('md2', 'RFC 1319 Appendix A.5', RFC13XX_SUITE, [
    '8350e5a3e24c153df2275c9f80692773', '32ec01ec4a6dac72c0ab96fb34c0b5d1', 'da853b0d3f88d99b30283a69e6ded6bb', 'ab4f496bfb2a530b219ff33031fe06b0',
    '4e8ddff3650292ab5a4108c3aa47940b', 'da33def2a42df13975352846c30338cd', 'd5976f79d83d3a0dc9806c3c66f3efd8']),
  ...suite('md4', 'RFC 1320 Appendix A.5', RFC13XX_SUITE, [
    '31d6cfe0d16ae931b73c59d7e0c089c0', 'bde52cb31de33e46245e05fbdbd6fb24', 'a448017aaf21d8525fc10ae87aa6729d', 'd9130a8164549fe818874806e1c7014b',
    'd79e1c308aa5bbcdeea8ed63df412da9', '043f8582f241db351ce627e153e7f0e4', 'e33b4ddc9c38f2199c3e7b164fcc0536']),
  ...suite('md5', 'RFC 1321 Appendix A.5', RFC13XX_SUITE, [
    'd41d8cd98f00b204e9800998ecf8427e', '0cc175b9c0f1b6a831c399e269772661', '900150983cd24fb0d6963f7d28e17f72', 'f96b697d7cb7938d525a2f31aaf161d0',
    'c3fcd3d76192e4007dfb496cca67e13b', 'd174ab98d277d9f5a5611c2c9f419d9f', '57edf4a22be3c955ac49da2e2107b67a']),
]
