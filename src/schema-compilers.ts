/**
 * The compilers that turn each route's JSON Schemas into a validator (Ajv, through
 * @fastify/ajv-compiler) and a serializer (fast-json-stringify), shared by every app this process
 * builds. Fastify makes new compilers for each instance, and compiling the routes' schemas is most
 * of what building an app costs (about 1.4 s of CPU of 1.7 s on this project's machine); an
 * embedder, a test or a benchmark that builds the app again with another configuration then pays
 * it once per distinct schema instead of once per app.
 *
 * A compiled function depends on the schema, the shared schemas and the compiler options only:
 * those, as JSON, are the cache key. The schemas are plain data (TypeBox's own marks are symbols,
 * which JSON leaves out and no compiler reads). Validators and serializers are pure functions of
 * their input; Ajv's `validate.errors` is set and read within one synchronous call.
 */
import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
/** What both factories give for a set of shared schemas and options: a compiler of one route's schema. */
type CompileRoute = (route: { schema: unknown }) => unknown
type BuildCompiler = (externalSchemas: unknown, options: unknown) => CompileRoute

/** Wraps a route-schema compiler so that a schema compiled before, as JSON, is not compiled again. */
function memoised(compile: CompileRoute): CompileRoute {
  const known = new Map<string, unknown>()
  return (route) => {
    const key = JSON.stringify(route.schema)
    if (!known.has(key)) known.set(key, compile(route))
    return known.get(key)
  }
}

/** One cache of compiled functions per set of shared schemas and options (in practice, one). */
function pooled(build: BuildCompiler): BuildCompiler {
  const pools = new Map<string, CompileRoute>()
  return (externalSchemas, options) => {
    const key = JSON.stringify([externalSchemas, options])
    let compile = pools.get(key)
    if (compile === undefined) {
      compile = memoised(build(externalSchemas, options))
      pools.set(key, compile)
    }
    return compile
  }
}

// The factories' declared types are unions over modes this app does not use (JTD); the wrappers
// pass their arguments and results through unchanged.
export const sharedCompilers: CompilersFactory = {
  buildValidator: pooled(AjvCompiler() as unknown as BuildCompiler) as unknown as CompilersFactory['buildValidator'],
  buildSerializer: pooled(SerializerSelector() as unknown as BuildCompiler) as unknown as CompilersFactory['buildSerializer'],
}
