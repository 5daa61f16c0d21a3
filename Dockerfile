# syntax=docker/dockerfile:1
# hashd's container image: `docker build -t hashd:0.1.0 .` (the tag is package.json's version, which
# deploy/kubernetes/kustomization.yaml and compose.yaml name; with podman, `podman build --format
# docker` keeps the HEALTHCHECK), then `docker run --rm -p 3000:3000 --read-only --tmpfs /tmp
# hashd:0.1.0`. docs/deployment.md has the compose and Kubernetes forms and the figures measured
# for this file.
#
# NODE_IMAGE may name any Debian-based Node image that has npm and a `node` user (uid 1000); CI
# builds a local stand-in (scripts/container-ci.sh) because no registry is reachable there.
ARG NODE_IMAGE=node:24-bookworm-slim

# ── build: every dependency (tsc, vite), the compiled server and the page ─────────────────────
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# A CA bundle for a TLS-intercepting proxy can be passed as a build secret (CI does:
# --secret id=npm_ca,src=$NODE_EXTRA_CA_CERTS); without it the build uses Node's own CAs.
# --ignore-scripts: the project's own `prepare` (npm run build) needs the sources, copied below so
# that this layer stays cached while they change; `npm rebuild` then runs the dependencies' own
# install scripts that package.json's allowScripts allows (koffi's), as `npm ci` would have.
RUN --mount=type=secret,id=npm_ca \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && npm rebuild --loglevel=error
COPY tsconfig.json ./
COPY src src
COPY scripts scripts
# scripts/figures.ts (npm run figures) renders the pages with bench/figures.ts; no other bench file is built here.
COPY bench/figures.ts bench/
COPY web web
RUN npm run build
# The software bill of materials of what the runtime stage ships: CycloneDX JSON of the production
# dependencies, validated against the CycloneDX schema by the tool itself (scripts/container-ci.sh
# checks it lists exactly the image's node_modules).
RUN node_modules/.bin/cyclonedx-npm --omit dev --output-format JSON --validate --mc-type application --output-file sbom.cdx.json
# Production dependencies only, without what Node never loads at run time: TypeScript sources and
# declarations (prune leaves empty scope folders such as @types), source maps, docs. npm installs
# only this platform's native packages (@node-rs/*-linux-x64-gnu and the like: optional
# dependencies filtered by os and cpu); koffi's linux-x64 package also carries a musl build, which
# a Debian (glibc) image never loads, so it goes too. --offline: the packages to keep are already
# here; asking the registry again only adds retries.
# prune keeps a package the lockfile marks dev-optional (a dev dependency's dependency that is also
# wanted by an optional package of another platform, such as tslib for @node-rs/*-wasm32-wasi), even
# when no installed production package requires it: npm ls then calls it extraneous, and it goes,
# so that the image holds exactly the tree the SBOM lists (npm's production tree as installed here).
RUN npm prune --omit=dev --offline --no-audit --no-fund --loglevel=error \
 && npm ls --omit=dev --all --parseable --long --offline >/tmp/tree.txt \
 && sed -n 's/:[^:]*:EXTRANEOUS$//p' /tmp/tree.txt | xargs -r rm -rf \
 && find node_modules \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o -name '*.md' \
      -o -name '*.markdown' -o -name 'CHANGELOG*' \) ! -iname 'licen[cs]e*' -type f -delete \
 && rm -rf node_modules/.package-lock.json \
      node_modules/@types node_modules/@koromix/koffi-*/musl_* \
 && find node_modules -depth -type d -empty -delete \
 && find dist -name '*.map' -type f -delete

# ── runtime: Node, the production dependencies, the compiled server and page ──────────────────
FROM ${NODE_IMAGE}
WORKDIR /app
# Listen on every interface of the container; the port is the one EXPOSEd.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
# Owned by root and read-only to the `node` user that runs the server: the image works with a
# read-only root filesystem (nothing is written outside /tmp, and hashd itself writes nothing).
COPY --from=build /app/package.json /app/sbom.cdx.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist/src dist/src
COPY --from=build /app/dist/web dist/web
# `docker run --rm hashd node dist/scripts/apikey.js NAME` mints an API key without a build step;
# pwned-import.js and pwned-verify.js make and check a breached-password store (docs/passwords.md);
# bank-import.js makes a similarity bank (docs/similarity.md; the Kubernetes import Job runs it);
# keys-generate.js makes a key inside a PKCS#11 token (docs/keys.md), audit-verify.js and
# audit-hash.js check an audit log and find a message in it (docs/operations.md). Each imports
# dist/src only (test/deploy-files.test.ts checks it), so no other file is needed.
COPY --from=build /app/dist/scripts/apikey.js /app/dist/scripts/pwned-import.js /app/dist/scripts/pwned-verify.js \
     /app/dist/scripts/keys-generate.js /app/dist/scripts/audit-verify.js /app/dist/scripts/audit-hash.js \
     /app/dist/scripts/bank-import.js dist/scripts/
USER node
EXPOSE 3000
# Liveness: GET /api/health on the container's own loopback, with Node (slim images have no curl),
# over HTTPS when TLS_CERT_FILE is set (src/healthcheck.ts).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "dist/src/healthcheck.js"]
# The Node flags of `npm start` (package.json "start"); test/deploy-files.test.ts fails when the two
# differ. Node runs as PID 1 and handles SIGTERM itself: it drains (docs/deployment.md, "Shutdown").
STOPSIGNAL SIGTERM
CMD ["node", "--expose-gc", "--max-semi-space-size=8", "--max-old-space-size=1024", "dist/src/server.js"]
