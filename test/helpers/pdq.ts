/** The PDQ fixtures (test/fixtures/pdq): the images, and the reference's hashes of them in expected.json. */
import { readFileSync } from 'node:fs'

const FIXTURES = new URL('../../../test/fixtures/pdq/', import.meta.url)

export interface ExpectedPdq { hash: string, quality: number, dihedral: Record<string, string> }

export const expectedPdq = JSON.parse(readFileSync(new URL('expected.json', FIXTURES), 'utf8')) as Record<string, ExpectedPdq>

export const pdqFixture = (name: string): Buffer => readFileSync(new URL(name, FIXTURES))
